import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHandler, manifestKey } from '../../functions/plan/handler.js';
import { athenaSources } from '../../lib/analysis/athena.js';
import { far6 } from '../../lib/batteries/far6/index.js';
import type { PlanOutput, Shard } from '../../lib/config/pipeline.js';
import { downloadCampaign } from '../../lib/run/campaignInput.js';
import { designDigest } from '../../lib/run/designDigest.js';
import type { Plan } from '../../lib/run/planCampaign.js';
import { shardDoneKey } from '../../lib/run/shards.js';
import { layout } from '../../lib/store/index.js';
import { narrowDesign } from '../helpers/campaigns.js';
import { lambdaContext, uploadCampaign, useHarness, readShards } from './harness.js';

const h = useHarness({ SONDAGE_TEST_OPENAI_KEY: 'sk-test-plan-secret-0123456789' });

const planWith = (deps = h.deps()) => ({ handler: createHandler({ ...deps, glueDatabase: 'sondage_db' }), logs: deps.logs });

async function manifest(key: string): Promise<Shard[]> {
  return await readShards(h.store, key);
}

describe('plan handler', () => {
  it('plans wave by wave: the root phase first (registered, prompts written), then the phases its readings feed, then done', async () => {
    // prepare: a small campaign whose models have an RPM low enough to cut partitions into several shards
    await uploadCampaign(h.store, 'plan-a', (doc) => {
      doc.design['languages'] = ['en', 'de'];
      doc.design['forms'] = ['plain'];
      doc.design['constraints'] = ['yesno', 'label'];
      doc.design['story_limit'] = 3;
      doc['concurrency'] = 32;
      for (const m of doc.models) m['rpm'] = 6;
    });
    const { handler, logs } = planWith();
    // act: exactly what the Plan wave state passes on the first turn
    const out: PlanOutput = await handler({ campaign: 'plan-a', execution: 'exec-1', retryFailed: false, phasesRun: [] }, lambdaContext());
    // assess: the manifest covers every item of every partition, in contiguous slices of the RPM-sized shard
    const plan = JSON.parse(Buffer.from((await h.store.get(layout.planKey('plan-a')))!).toString('utf8')) as Plan;
    expect(out.wave.phases).toEqual(['generate']);
    expect(out.phasesRun).toEqual(['generate']);
    expect(out.done).toBe(false);
    const generate = await manifest(out.wave.lambda.manifestKey);
    expect(out.wave.lambda.manifestKey).toBe(manifestKey('exec-1', 0, 'lambda'));
    expect(out.wave.lambda.shardCount).toBe(generate.length);
    expect(out.wave.gpu.shardCount).toBe(0);
    for (const p of plan.partitions) {
      const mine = generate.filter((s) => s.model === p.model && s.language === p.language);
      const n = p.items['generate']!;
      expect(mine.map((s) => [s.phase, s.start, s.end])).toEqual(Array.from({ length: Math.ceil(n / 20) }, (_, i) => ['generate', i * 20, Math.min(n, (i + 1) * 20)]));
      expect(mine.every((s) => s.mode === 'sync')).toBe(true);
    }
    const items = plan.partitions.reduce((s, p) => s + p.items['generate']!, 0);
    expect(items).toBeGreaterThan(20);
    expect(await h.ledger.counts('plan-a', 'generate')).toEqual({ pending: items, done: 0, failed: 0 });
    expect((await h.ledger.budget('plan-a')).cap_usd).toBe(5);
    const prompts = await h.store.list('campaigns/plan-a/generate/prompts/');
    expect(prompts).toHaveLength(plan.partitions.length);
    // concurrency 32 over 16 calls per copy, and the RPM (6 < 30 per copy) holds it to one copy
    expect(out.wave.lambda.maxConcurrency).toBe(1);
    // no `aws:` in the campaign: the default tolerance, 5 % of the wave's shards
    expect(out.wave.lambda).toMatchObject({ toleratedFailurePercentage: 5, pollSeconds: 5 });
    expect(out.expectedCostUsd).toBeCloseTo(plan.totals.costUsd, 12);
    expect(out.capUsd).toBe(5);
    // the Athena step runs the analysis's first query over the Glue tables, as the report renders it (so it adopts the results)
    expect(out.analysis.queryString).toBe(far6.analysis.firstQuery(athenaSources('sondage_db', 'far6', 'plan-a', ['beta', 'alpha'], undefined, ['en', 'de'])));
    expect(out.analysis.queryString).toContain(`FROM "sondage_db"."far6_prompts" WHERE campaign_key = 'plan-a' AND phase_key IN ('generate') AND model IN ('alpha', 'beta') AND language IN ('de', 'en')`);
    expect(logs.some((l) => l.includes('"wave planned"'))).toBe(true);

    // act: the next turns, told what ran
    const second = await handler({ campaign: 'plan-a', execution: 'exec-1', retryFailed: false, phasesRun: out.phasesRun }, lambdaContext());
    const third = await handler({ campaign: 'plan-a', execution: 'exec-1', retryFailed: false, phasesRun: second.phasesRun }, lambdaContext());
    // assess: the judge after generate, judge shards only where the slice holds a reply the judge reads; then nothing left
    expect(second.wave.phases).toEqual(['judge']);
    const judge = await manifest(second.wave.lambda.manifestKey);
    expect(second.wave.lambda.manifestKey).toBe(manifestKey('exec-1', 1, 'lambda'));
    expect(judge.length).toBeGreaterThan(0);
    expect(judge.length).toBeLessThanOrEqual(generate.length);
    expect(judge.every((s) => s.phase === 'judge')).toBe(true);
    expect(third).toMatchObject({ done: true, phasesRun: ['generate', 'judge'], wave: { phases: [], lambda: { shardCount: 0 } } });
    // the later waves set nothing up again
    expect((await h.ledger.counts('plan-a', 'generate')).pending).toBe(items);
  });

  it('lists the shards of items failed for good, and dependent shards marked done, only with retryFailed', async () => {
    // prepare: every generate item settled, the first one failed for good; every judge shard marked done
    await uploadCampaign(h.store, 'plan-rf', (doc) => {
      narrowDesign(doc, { forms: ['plain'], constraints: ['yesno', 'label'], stories: 2 });
      doc.models = doc.models.slice(0, 1);
      doc.models[0]!['rpm'] = 6;
      doc.judge['sample_rate'] = 1;
    });
    const { handler } = planWith();
    const first = await handler({ campaign: 'plan-rf', execution: 'exec-1' }, lambdaContext());
    const judgeWave = await handler({ campaign: 'plan-rf', execution: 'exec-1', phasesRun: ['generate'] }, lambdaContext());
    const [generate, judge] = [await manifest(first.wave.lambda.manifestKey), await manifest(judgeWave.wave.lambda.manifestKey)];
    expect(generate.length).toBeGreaterThan(1);
    expect(judge.length).toBeGreaterThan(0);
    const ids = [...(await h.ledger.pendingItems('plan-rf', 'generate'))];
    // Ids of several partitions in one part: DynamoLedger keys items by phase and id alone.
    await h.ledger.commitPart({ campaign: 'plan-rf', phase: 'generate', model: 'any', language: 'en', partKey: 'part-rf', done: ids.slice(1), failed: [], failedPermanently: ids.slice(0, 1), costUsd: 0 });
    // Markers under the design as uploaded: a marker of another design would not be one (test/infra/pipelineRereads.test.ts).
    const design = await designDigest(h.store, await downloadCampaign(h.store, 'plan-rf', path.join(h.deps().tmpDir, 'plan-rf-input')));
    for (const shard of judge) await h.store.put(shardDoneKey('plan-rf', 'judge', shard, design), 'done');
    // act
    const plain = await handler({ campaign: 'plan-rf', execution: 'exec-2', retryFailed: false }, lambdaContext());
    const plainJudge = await handler({ campaign: 'plan-rf', execution: 'exec-2', retryFailed: false, phasesRun: ['generate'] }, lambdaContext());
    const retry = await handler({ campaign: 'plan-rf', execution: 'exec-3', retryFailed: true }, lambdaContext());
    const retryJudge = await handler({ campaign: 'plan-rf', execution: 'exec-3', retryFailed: true, phasesRun: ['generate'] }, lambdaContext());
    // assess: the first shard holds the failed item; the judge markers are passed over
    expect([await manifest(plain.wave.lambda.manifestKey), await manifest(plainJudge.wave.lambda.manifestKey)]).toEqual([[], []]);
    expect(await manifest(retry.wave.lambda.manifestKey)).toEqual(generate.slice(0, 1));
    expect(await manifest(retryJudge.wave.lambda.manifestKey)).toEqual(judge);
    await expect(handler({ campaign: 'plan-rf', execution: 'exec-4', retryFailed: 'yes' }, lambdaContext())).rejects.toThrow(/plan event: retryFailed: expected true or false/);
    await expect(handler({ campaign: 'plan-rf', execution: 'exec-4', phasesRun: 'generate' }, lambdaContext())).rejects.toThrow(/plan event: phasesRun: expected the list of phase names/);
  });

  it('fails clearly when the expected cost exceeds the cap, before anything is registered', async () => {
    await uploadCampaign(h.store, 'plan-poor', (doc) => {
      doc.design['languages'] = ['en'];
      doc.budget_usd = 0.000001;
    });
    const { handler } = planWith();
    await expect(handler({ campaign: 'plan-poor', execution: 'exec-1' }, lambdaContext())).rejects.toThrow(/plan-poor: the expected cost \$[\d.]+ exceeds budget_usd \$0\.000001/);
    expect(await h.ledger.counts('plan-poor', 'generate')).toEqual({ pending: 0, done: 0, failed: 0 });
    expect(await h.store.list('scratch/exec-1/')).not.toContain(manifestKey('exec-1', 0, 'lambda').replace('exec-1', 'never'));
    // act: `start --aws --allow-partial`, in the payload the state machine sends (its first state defaults the flags)
    const partial = await handler({ campaign: 'plan-poor', execution: 'exec-2', retryFailed: false, allowPartial: true, phasesRun: [] }, lambdaContext());
    // assess: planned as `run --allow-partial` runs, until the cap
    expect(partial.wave.lambda.shardCount).toBeGreaterThan(0);
    expect(partial.expectedCostUsd).toBeGreaterThan(0.000001);
    expect((await h.ledger.counts('plan-poor', 'generate')).pending).toBeGreaterThan(0);
    expect((await h.ledger.budget('plan-poor')).cap_usd).toBe(0.000001);
    // and a payload with allowPartial false refuses as before
    await expect(handler({ campaign: 'plan-poor', execution: 'exec-3', retryFailed: false, allowPartial: false, phasesRun: [] }, lambdaContext())).rejects.toThrow(/exceeds budget_usd/);
    await expect(handler({ campaign: 'plan-poor', execution: 'exec-3', allowPartial: 'yes' }, lambdaContext())).rejects.toThrow(/plan event: allowPartial: expected true or false/);
  });

  it('names the uploaded file and the field when the campaign is bad, and what to upload when it is missing', async () => {
    await uploadCampaign(h.store, 'plan-bad', (doc) => {
      doc.models[0]!['provider'] = 'open-ai';
    });
    const { handler } = planWith();
    await expect(handler({ campaign: 'plan-bad', execution: 'exec-1' }, lambdaContext())).rejects.toThrow(/campaigns\/plan-bad\/input\/campaign\.yaml[\s\S]*models\[0\]\.provider/);
    await expect(handler({ campaign: 'nowhere', execution: 'exec-1' }, lambdaContext())).rejects.toThrow(/no campaigns\/nowhere\/input\/campaign\.yaml in the bucket/);
    await expect(handler({ campaign: 'plan-bad' }, lambdaContext())).rejects.toThrow(/plan event: execution: expected the execution name/);
  });

  it('reads the provider keys from Secrets Manager and checks them, never writing a key to a log line or an error', async () => {
    // prepare: a real provider whose key is in the secret, and one whose key variable is not
    const key = 'sk-test-plan-secret-0123456789';
    await uploadCampaign(h.store, 'plan-keys', (doc) => {
      doc.design['languages'] = ['en'];
      doc.models = [{ id: 'real', provider: 'openai', model: 'gpt-4.1-mini', api_key_env: 'SONDAGE_TEST_OPENAI_KEY', price: { input_per_mtok: 1, output_per_mtok: 2 } }];
    });
    await uploadCampaign(h.store, 'plan-nokey', (doc) => {
      doc.design['languages'] = ['en'];
      doc.models = [{ id: 'real', provider: 'openai', model: 'gpt-4.1-mini', api_key_env: 'SONDAGE_TEST_MISSING_KEY', price: { input_per_mtok: 1, output_per_mtok: 2 } }];
    });
    delete process.env['SONDAGE_TEST_OPENAI_KEY'];
    const { handler, logs } = planWith();
    const readsBefore = h.secrets.reads;
    try {
      // act
      const out = await handler({ campaign: 'plan-keys', execution: 'exec-k' }, lambdaContext());
      const err = await handler({ campaign: 'plan-nokey', execution: 'exec-k' }, lambdaContext()).then(
        () => new Error('expected the plan to fail'),
        (e: unknown) => e as Error,
      );
      // assess
      expect(out.wave.lambda.shardCount).toBeGreaterThan(0);
      expect(process.env['SONDAGE_TEST_OPENAI_KEY']).toBe(key);
      expect(err.message).toMatch(/SONDAGE_TEST_MISSING_KEY is not set/);
      expect(h.secrets.reads - readsBefore).toBe(1); // once per container
      for (const text of [...logs, err.message, err.stack ?? '']) expect(text).not.toContain(key);
    } finally {
      delete process.env['SONDAGE_TEST_OPENAI_KEY'];
    }
  });
});

describe('plan handler, Bedrock batch against the stack', () => {
  const STACK = { role_arn: 'arn:aws:iam::123456789012:role/Sondage-BedrockBatchServiceRole-ABC', s3_uri: 's3://sondage-bucket-xyz/bedrock-batch' };
  const upload = (name: string) =>
    uploadCampaign(h.store, name, (doc) => {
      doc.design['story_limit'] = 2;
      doc.design['languages'] = ['en'];
      doc.models = [
        {
          id: 'nova',
          provider: 'bedrock',
          model: 'amazon.nova-lite-v1:0',
          region: 'us-east-1',
          mode: 'batch',
          price: { input_per_mtok: 0.06, output_per_mtok: 0.24, batch_discount: 0.5 },
          bedrock_batch: { ...STACK, s3_uri: `${STACK.s3_uri}/${name}` },
        },
      ];
    });

  it('refuses, before anything is registered, a mode: batch Bedrock model on a stack deployed without -c sondage:bedrockBatch=true', async () => {
    await upload('bedrock-off');
    const { handler } = planWith();
    await expect(handler({ campaign: 'bedrock-off', execution: 'exec-1', retryFailed: false, phasesRun: [] }, lambdaContext())).rejects.toThrow(
      /models\[0\]\.bedrock_batch: the deployed stack has no Bedrock batch role; deploy it with `npx cdk deploy -c sondage:bedrockBatch=true`/,
    );
    expect(await h.ledger.counts('bedrock-off', 'generate')).toEqual({ pending: 0, done: 0, failed: 0 });
  });

  it('plans batch shards for it when the stack\'s role and prefix are the campaign\'s', async () => {
    await upload('bedrock-on');
    const handler = createHandler({ ...h.deps(), glueDatabase: 'sondage_db', bedrockBatch: STACK });
    const out = await handler({ campaign: 'bedrock-on', execution: 'exec-1', retryFailed: false, phasesRun: [] }, lambdaContext());
    const shards = await manifest(out.wave.lambda.manifestKey);
    expect(shards.length).toBeGreaterThan(0);
    expect(shards.every((s) => s.model === 'nova' && s.mode === 'batch')).toBe(true);
  });
});
