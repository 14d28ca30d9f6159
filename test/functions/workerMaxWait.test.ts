/**
 * The worker's ceiling on a provider's Retry-After is the campaign's `aws.max_wait_seconds` (the
 * local run's `--max-wait`): a wait at or under it is sat out and the call retried; a longer one
 * stops that model's calls in the execution at once, its items pending, with when to resume.
 */
import { describe, expect, it } from 'vitest';
import { createHandler as createPlan } from '../../functions/plan/handler.js';
import { createHandler as createWorker } from '../../functions/worker/handler.js';
import type { Shard } from '../../lib/config/pipeline.js';
import { chatCompletion, startWireServer } from '../providers/helpers/wireServer.js';
import { lambdaContext, uploadCampaign, useHarness } from './harness.js';

const h = useHarness();

/** The first generate shard of a one-model FAR-6 campaign (two stories, English, plain, yes/no) answered by `baseUrl`. */
async function firstShard(campaign: string, baseUrl: string, maxWaitSeconds: number): Promise<Shard> {
  await uploadCampaign(h.store, campaign, (doc) => {
    doc.design['languages'] = ['en'];
    doc.design['forms'] = ['plain'];
    doc.design['constraints'] = ['yesno'];
    doc.design['story_limit'] = 2;
    doc['aws'] = { max_wait_seconds: maxWaitSeconds };
    doc.models = [{ id: 'local', provider: 'openai-compatible', model: 'qwen3-8b', base_url: baseUrl, api_key_env: 'SONDAGE_TEST_MAXWAIT_KEY', rpm: 100_000, timeout_s: 5, price: { input_per_mtok: 1, output_per_mtok: 2 } }];
  });
  const out = await createPlan({ ...h.deps(), glueDatabase: 'db' })({ campaign, execution: 'exec-1' }, lambdaContext());
  return (JSON.parse(Buffer.from((await h.store.get(out.wave.lambda.manifestKey))!).toString('utf8')) as Shard[])[0]!;
}

describe('the worker and aws.max_wait_seconds', () => {
  it.each([
    { name: 'stops a model whose Retry-After (2 s) is above a ceiling of 1 s', maxWait: 1, stopped: true },
    { name: 'sits out the same Retry-After under a ceiling of 3 s and retries', maxWait: 3, stopped: false },
  ])('$name', async ({ maxWait, stopped }) => {
    // prepare: a prompt's first attempt is answered 429 with Retry-After: 2, a retry with a reply;
    // where the ceiling must stop the model, every attempt is answered 429 (two items may share a prompt)
    const seen = new Set<string>();
    const server = await startWireServer([
      {
        from: (req) => {
          const prompt = JSON.stringify((req.body as { messages?: unknown }).messages);
          if (seen.has(prompt) && !stopped) return chatCompletion(req, 'Yes.');
          seen.add(prompt);
          return { status: 429, headers: { 'retry-after': '2' }, json: { error: { message: 'rate limited', type: 'rate_limit_error' } } };
        },
      },
    ]);
    process.env['SONDAGE_TEST_MAXWAIT_KEY'] = 'sk-test-local-0000000000000000';
    try {
      const campaign = `w-maxwait-${maxWait}`;
      const shard = await firstShard(campaign, `${server.url}/v1`, maxWait);
      const total = shard.end - shard.start;
      // act
      const out = await createWorker(h.deps())({ Items: [shard], BatchInput: { campaign, execution: 'exec-1' } }, lambdaContext(120_000));
      // assess
      const failures = (await h.ledger.failures(campaign)).filter((f) => f.error === 'ProviderWaitTooLong');
      if (stopped) {
        expect(out).toMatchObject({ done: 0, failed: 0, pending: 0, waitBlocked: total, again: false });
        expect(failures).toHaveLength(1);
        expect(failures[0]!.cause).toMatch(/asked to wait 2s .*longer than the 1s a worker waits/);
        expect(await h.ledger.counts(campaign, 'generate')).toMatchObject({ done: 0, pending: total });
      } else {
        expect(out).toMatchObject({ done: total, failed: 0, pending: 0 });
        expect(failures).toEqual([]);
        expect(server.requests.length).toBeGreaterThan(total);
      }
    } finally {
      delete process.env['SONDAGE_TEST_MAXWAIT_KEY'];
      await server.close();
    }
  });
});
