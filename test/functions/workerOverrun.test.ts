/**
 * A provider that reports usage far above what a call reserved, met by one worker invocation on
 * AWS: the DynamoDB ledger's overrun flag moves the campaign's fence, so the other invocations of
 * the wave (other shards, other Lambda copies) start no call either, and the excess and the model
 * that caused it are on the budget item. The handlers run with the exact payloads the state machine
 * sends, against the local S3/DynamoDB/Secrets Manager servers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createPlan } from '../../functions/plan/handler.js';
import { createHandler as createWorker } from '../../functions/worker/handler.js';
import type { Shard, WorkerEvent } from '../../lib/config/pipeline.js';
import { chatCompletion, startWireServer } from '../providers/helpers/wireServer.js';
import type { WireServer } from '../providers/helpers/wireServer.js';
import { narrowDesign } from '../helpers/campaigns.js';
import { SECRET_ARN, lambdaContext, startHarness, uploadCampaign, type Harness, readShards } from './harness.js';

let h: Harness;
let server: WireServer;
beforeAll(async () => {
  h = await startHarness();
  h.secrets.secrets.set(SECRET_ARN, JSON.stringify({ SONDAGE_TEST_OVERRUN_KEY: 'sk-test-overrun-0123456789' }));
  // A million prompt tokens a reply: $10 a call at $10 per Mtok, far above any reservation.
  server = await startWireServer([{ from: (req) => chatCompletion(req, 'Yes. That is how the story reads to me.', { prompt_tokens: 1_000_000, completion_tokens: 5 }) }]);
});
afterAll(async () => {
  await server.close();
  await h.close();
  delete process.env['SONDAGE_TEST_OVERRUN_KEY'];
});

describe('an overrun on AWS', () => {
  it('stops every worker of the campaign at its next chunk, not only the invocation that saw it', async () => {
    // prepare: a cap far above the overrun, so that only the flag (not the headroom) can stop the others
    await uploadCampaign(h.store, 'w-overrun', (doc) => {
      doc.budget_usd = 1_000;
      narrowDesign(doc, { forms: ['plain'], constraints: ['yesno', 'label'], stories: 4 });
      doc.models = [
        { id: 'local', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: 'SONDAGE_TEST_OVERRUN_KEY', rpm: 100_000, price: { input_per_mtok: 10, output_per_mtok: 30 } },
      ];
    });
    const planned = await createPlan({ ...h.deps(), glueDatabase: 'db' })({ campaign: 'w-overrun', execution: 'exec-1' }, lambdaContext());
    const listed = await readShards(h.store, planned.wave.lambda.manifestKey);
    // Two Lambda copies' shards: the first listed one cut in two.
    const whole = listed[0]!;
    const mid = whole.start + Math.floor((whole.end - whole.start) / 2);
    const shards: Shard[] = [{ ...whole, end: mid }, { ...whole, start: mid }];
    expect(mid - whole.start).toBeGreaterThan(1);
    const event = (items: readonly Shard[]): WorkerEvent => ({ Items: items, BatchInput: { campaign: 'w-overrun', execution: 'exec-1' } });
    // act: one Lambda copy takes the first shard and meets the overrun; another copy then takes the rest
    const first = await createWorker(h.deps())(event(shards.slice(0, 1)), lambdaContext(undefined, 0, 'req-a'));
    const callsAfterFirst = server.requests.length;
    const rest = await createWorker(h.deps())(event(shards.slice(1)), lambdaContext(undefined, 0, 'req-b'));
    // assess: the first stopped at its overrun; the second asked nothing, and stopped as at the cap
    expect(first.stopped).toBe('budget');
    expect(callsAfterFirst).toBeGreaterThan(0);
    expect(server.requests.length).toBe(callsAfterFirst);
    expect(rest).toMatchObject({ done: 0, stopped: 'budget', again: false });
    expect(rest.pending).toBeGreaterThan(0);
    const raw = h.dynamo.items('budget').find((i) => JSON.stringify(i.sk) === '{"S":"BUDGET"}' && JSON.stringify(i.pk) === '{"S":"w-overrun"}')!;
    expect(raw.overrun_model).toEqual({ S: 'openai-compatible/qwen3-8b' });
    expect(Number((raw.overrun_usd as { N: string }).N)).toBeGreaterThan(9);
    // A re-started execution's plan moves the fence back (after the user raised the cap or fixed the model).
    await createPlan({ ...h.deps(), glueDatabase: 'db' })({ campaign: 'w-overrun', execution: 'exec-2' }, lambdaContext());
    const ledger = h.deps().ledgerFor('exec-2');
    expect(await ledger.reserve('w-overrun', 'after-restart', 0.01)).toBe(true);
  });
});
