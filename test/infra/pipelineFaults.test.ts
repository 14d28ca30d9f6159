/**
 * The faults: the synthesized state machine executed with the real handlers (as
 * in pipelineRun.test.ts) while a worker crashes mid-batch, DynamoDB throttles, S3 answers 503
 * SlowDown, or Secrets Manager is unavailable. Each execution runs to the end, or to a failure
 * the record-failure step writes into the ledger and then a rerun as `sondage start --aws
 * --retry-failed` starts it; at the end nothing is lost and nothing counted twice: every item the
 * uninterrupted local run answered has exactly one successful reply, the ledger's spend is the sum
 * of the stored replies' costs (and the local run's), nothing is reserved or pending, spend ≤ cap,
 * and the report's tables are the local run's.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AthenaClient } from '@aws-sdk/client-athena';
import { AthenaQueryable } from '../../lib/store/AthenaQueryable.js';
import { stagingPrefix } from '../../lib/store/stagedParts.js';
import type { RunSummary } from '../../lib/run/runCampaign.js';
import { readResults } from '../helpers/runData.js';
import type { ExecutionRecord } from '../helpers/asl/interpreter.js';
import { far6Campaign, severalPartsFar6 } from '../helpers/pipeline/campaignFiles.js';
import { localFar6Run, type LocalFar6Run } from '../helpers/pipeline/localFar6Run.js';
import { CREDENTIALS, REGION } from '../helpers/pipeline/awsStandIns.js';
import { expectEveryItemOnce } from '../helpers/pipeline/expectEveryItemOnce.js';
import { startPipeline } from '../helpers/pipeline/pipelineHarness.js';
import type { Pipeline } from '../helpers/pipeline/pipelineHarness.js';
import { asRemote } from '../helpers/localSource.js';
import { useServer } from '../helpers/useServer.js';

const CAMPAIGN = 'pipe-faults';

let cleanup: () => Promise<void>;
let file: string;
let local: RunSummary;
let localResults: Map<string, string>;
let tolerantFile: string;
let models: string[];

beforeAll(async () => {
  let root: string;
  let ctx: LocalFar6Run['ctx'];
  ({ root, cleanup, file, ctx, local } = await localFar6Run('pipeline-faults', CAMPAIGN, severalPartsFar6));
  // The same campaign tolerating failed worker batches (the local run ignores `aws:`).
  const tolerantDir = path.join(root, 'tolerant');
  await mkdir(tolerantDir, { recursive: true });
  tolerantFile = await far6Campaign(tolerantDir, CAMPAIGN, (doc) => {
    severalPartsFar6(doc);
    (doc as Record<string, unknown>)['aws'] = { tolerated_failure_percentage: 100 };
  });
  models = ctx.campaign.models.map((m) => m.id);
  localResults = await readResults(ctx.dataDir, CAMPAIGN);
}, 60_000);

const pipelines = useServer('pipeline', startPipeline);
afterAll(() => cleanup());

/**
 * A fresh deployment with the campaign uploaded. Its workers' leases are short: each execution's
 * Map returns only once all its workers have, so the next plan waits for no live worker, only for
 * a killed one's lease to lapse, which it still does, sooner.
 */
async function deploy(campaignFile = file): Promise<Pipeline> {
  const pipeline = await pipelines.start();
  pipeline.fleet.workerLeaseMs = 600;
  await pipeline.upload(campaignFile);
  return pipeline;
}

/** Executions until one succeeds (at most `max`): the first as `sondage start --aws`, the others as `--retry-failed`. */
async function runToTheEnd(pipeline: Pipeline, max = 3): Promise<ExecutionRecord[]> {
  const runs: ExecutionRecord[] = [];
  for (;;) {
    const run = await pipeline.execute(runs.length === 0 ? { campaign: CAMPAIGN } : { campaign: CAMPAIGN, retryFailed: true });
    runs.push(run);
    if (run.result.status === 'SUCCEEDED' || runs.length === max) return runs;
  }
}

/** 0 lost, 0 counted twice, spend = stored cost = the local run's ≤ cap, nothing open; the local run's tables. */
async function expectIntact(pipeline: Pipeline, runs: readonly ExecutionRecord[]): Promise<void> {
  const acc = await expectEveryItemOnce(pipeline, CAMPAIGN, local, runs, () => 0);
  expect(acc.budget.spent_usd).toBeCloseTo(acc.storedCostUsd, 12);
  expect(acc.budget.spent_usd).toBeCloseTo(local.spentUsd, 12);
  expect(acc.budget.spent_usd).toBeLessThanOrEqual(acc.budget.cap_usd);
  // Nothing left in staging: every part stored was committed and moved into its table.
  for (const summary of local.phases) expect(await pipeline.store.list(stagingPrefix(CAMPAIGN, summary.phase)), `${summary.phase}: staged parts`).toEqual([]);
  const results = await pipeline.results(CAMPAIGN);
  const source = `s3://${pipeline.standIns.names.bucket}/campaigns/${CAMPAIGN}/`;
  expect([...results.keys()].sort()).toEqual([...localResults.keys()].sort());
  for (const [name, text] of results) expect(text === asRemote(localResults.get(name)!, CAMPAIGN, source), `${name} differs from the local run's`).toBe(true);
}

/** What Athena (the stand-in, over the bucket as it is now) sums of a phase's replies: items answered, and their cost. */
async function athenaSums(pipeline: Pipeline, phase: string): Promise<{ okItems: number; costUsd: number }> {
  const { names, athena } = pipeline.standIns;
  const client = new AthenaClient({ endpoint: athena.url, region: REGION, credentials: CREDENTIALS });
  try {
    const q = new AthenaQueryable({ workgroup: names.athenaWorkgroup, database: names.glueDatabase, client, reuseMaxAgeMinutes: 0, pollInitialMs: 1, pollMaxMs: 5 });
    const [row] = await q.all<Record<string, unknown>>(
      `SELECT count(DISTINCT CASE WHEN status = 'ok' THEN item_id END) AS ok_items, coalesce(sum(cost_usd), 0) AS cost_usd FROM "${names.glueDatabase}"."replies" ` +
        `WHERE campaign_key = '${CAMPAIGN}' AND phase_key = '${phase}' AND model IN (${models.map((m) => `'${m}'`).join(', ')})`,
    );
    return { okItems: Number(row!['ok_items']), costUsd: Number(row!['cost_usd']) };
  } finally {
    client.destroy();
  }
}

/**
 * Failed executions ended in the Fail state, each with its failure recorded in the ledger (besides
 * the batches given up on, recorded by the worker's give-up step under the execution's name).
 */
async function expectRecordedFailures(pipeline: Pipeline, runs: readonly ExecutionRecord[], error: RegExp): Promise<void> {
  const failed = runs.filter((r) => r.result.status === 'FAILED');
  for (const r of failed) expect(r.result).toMatchObject({ status: 'FAILED', error: 'SondageFailed' });
  const failures = (await pipeline.ledger.failures(CAMPAIGN)).filter((f) => f.error !== 'ShardFailed');
  expect(failures.map((f) => f.execution).sort()).toEqual(failed.map((r) => r.arn).sort());
  for (const f of failures) expect(`${f.error} ${f.cause}`).toMatch(error);
}

describe('the synthesized state machine under faults', () => {
  it('the campaign is big enough for a batch of several shards, each its own part', () => {
    expect(local.phases.map((s) => s.phase)).toEqual(['generate', 'judge']);
    // Two partitions (one language, two models) of more than one 20-item shard each, in one batch.
    expect(local.phases[0]!.items).toBeGreaterThan(2 * 20);
  });

  it.each([
    { kind: 'throw', at: 'upload', what: 'a worker that throws while storing its second part (its handler salvages what it journaled)' },
    { kind: 'kill', at: 'upload', what: 'a worker killed while storing its second part (nothing salvaged)' },
    { kind: 'throw', at: 'commit', what: 'a worker that throws committing its second part, stored (its handler salvages it)' },
    { kind: 'kill', at: 'mark', what: 'a worker killed between its second part\'s commit and the marks of its items (the next reader marks them; none is asked twice)' },
    // Killed at commit and at publish: the two tests below, which look into the bucket between the executions.
  ] as const)('$what', async ({ kind, at }) => {
    const pipeline = await deploy();
    pipeline.fleet.crashNextWorker({ kind, at, after: 1 });
    const runs = await runToTheEnd(pipeline);
    expect(runs).toHaveLength(2);
    expect(pipeline.fleet.of('worker').filter((i) => i.outcome !== 'ok')).toHaveLength(1);
    await expectRecordedFailures(pipeline, runs, kind === 'kill' ? /Runtime\.ExitError|ExceedToleratedFailureThreshold/ : /ExceedToleratedFailureThreshold/);
    await expectIntact(pipeline, runs);
  });

  it.each([
    ['commit', 'after storing its second part, between its upload and its ledger commit: Athena\'s sums leave the part out, as the ledger does, until the next execution adopts it'],
    ['publish', 'between its second part\'s ledger commit and its move out of staging into the table: the next execution publishes it, and Athena counts it once'],
  ] as const)('a worker killed at %s, %s', async (at, _what) => {
    const pipeline = await deploy();
    pipeline.fleet.crashNextWorker({ kind: 'kill', at, after: 1 });
    // act: the execution the kill fails
    const first = await pipeline.execute({ campaign: CAMPAIGN });
    expect(first.result.status).toBe('FAILED');
    // assess: the killed part is in the bucket, staged, outside the replies table
    const staged = await pipeline.store.list(stagingPrefix(CAMPAIGN, 'generate'));
    expect(staged.filter((k) => k.includes('/replies/'))).toHaveLength(1);
    const ledger = await pipeline.ledger.counts(CAMPAIGN, 'generate');
    const budget = await pipeline.ledger.budget(CAMPAIGN);
    const sums = await athenaSums(pipeline, 'generate');
    if (at === 'commit') {
      // Uncommitted: Athena counts exactly what the ledger counts, no reply of the killed part.
      expect(sums.okItems).toBe(ledger.done);
      expect(sums.costUsd).toBeCloseTo(budget.spent_usd, 12);
    } else {
      // Committed, not yet moved: counted by the ledger, not yet seen by Athena.
      expect(sums.okItems).toBeLessThan(ledger.done);
      expect(sums.costUsd).toBeLessThan(budget.spent_usd);
    }
    // act: `sondage start --aws --retry-failed`
    const second = await pipeline.execute({ campaign: CAMPAIGN, retryFailed: true });
    // assess: the killed worker alone failed, and the first execution's failure is recorded; nothing
    // lost or twice in the tables (the second execution succeeded), Athena's sums are the ledger's
    expect(pipeline.fleet.of('worker').filter((i) => i.outcome !== 'ok')).toHaveLength(1);
    await expectRecordedFailures(pipeline, [first, second], /Runtime\.ExitError|ExceedToleratedFailureThreshold/);
    await expectIntact(pipeline, [first, second]);
    let athenaCost = 0;
    for (const summary of local.phases) {
      const phase = await athenaSums(pipeline, summary.phase);
      expect(phase.okItems, summary.phase).toBe(summary.done);
      athenaCost += phase.costUsd;
    }
    expect(athenaCost).toBeCloseTo((await pipeline.ledger.budget(CAMPAIGN)).spent_usd, 12);
  });

  it('aws.tolerated_failure_percentage: the wave goes on past a failed batch, whose items are recorded failed and named, and --retry-failed asks them again', async () => {
    const pipeline = await deploy(tolerantFile);
    pipeline.fleet.crashNextWorker({ kind: 'throw', at: 'upload', after: 1 });
    // act: the first execution, as `sondage start --aws`
    const first = await pipeline.execute({ campaign: CAMPAIGN });
    // assess: it succeeds (the Map tolerated the failed child); the give-up step recorded the batch's items failed
    expect(first.result.status, JSON.stringify(first.result).slice(0, 2000)).toBe('SUCCEEDED');
    const generate = await pipeline.ledger.counts(CAMPAIGN, 'generate');
    expect(generate.failed).toBeGreaterThan(0);
    expect(generate.pending).toBe(0);
    const failures = await pipeline.ledger.failures(CAMPAIGN);
    expect(failures.map((f) => f.error)).toEqual(['ShardFailed']);
    expect(failures[0]!.cause).toMatch(/the worker batch of generate \S+\/en \[\d+, \d+\).* failed after its retries .*item\(s\) still pending are recorded failed: `sondage start --aws` \(with or without --retry-failed\) asks them again/);
    // Athena result reuse (60 minutes) would hand the second report the first one's query result,
    // which lacks the failed batch's replies: this rerun comes more than an hour later.
    for (const q of pipeline.standIns.athena.executions.values()) (q as { submittedAt: number }).submittedAt -= 61 * 60_000;
    // act: `sondage start --aws --retry-failed`
    const second = await pipeline.execute({ campaign: CAMPAIGN, retryFailed: true });
    // assess: nothing lost, nothing twice, the local run's tables
    await expectIntact(pipeline, [first, second]);
  });

  it.each(['ThrottlingException', 'ProvisionedThroughputExceededException'] as const)('DynamoDB answering %s for a while, from the first worker on', async (type) => {
    const pipeline = await deploy();
    pipeline.fleet.onInvoke = (fn, previous) => {
      if (fn === 'worker' && previous === 0) pipeline.standIns.dynamo.injectFault({ times: 5, type });
    };
    const runs = await runToTheEnd(pipeline);
    expect(pipeline.standIns.dynamo.faultsServed).toBe(5);
    await expectIntact(pipeline, runs);
  });

  it('S3 answering 503 SlowDown for a while: the workers\' writes, then the Map\'s manifest read', async () => {
    const pipeline = await deploy();
    pipeline.fleet.onInvoke = (fn, previous) => {
      if (fn === 'worker' && previous === 0) pipeline.standIns.s3.injectFault({ times: 6, methods: ['PUT'] });
      // The judge wave's manifest, read by the Distributed Map's ItemReader (three tries of the SDK, all refused).
      if (fn === 'plan' && previous === 1) pipeline.standIns.s3.injectFault({ times: 3, methods: ['GET'], keyPrefix: 'scratch/' });
    };
    const runs = await runToTheEnd(pipeline);
    expect(pipeline.standIns.s3.faultsServed).toBe(9);
    await expectIntact(pipeline, runs);
  });

  it.each([
    { service: 'S3', what: 'a part upload answered 503 SlowDown past the SDK\'s three tries' },
    { service: 'DynamoDB', what: 'DynamoDB throttling past the SDK\'s three tries' },
  ] as const)('$what: the batch is invoked again within the execution, which succeeds without a rerun', async ({ service }) => {
    const pipeline = await deploy();
    pipeline.fleet.onInvoke = (fn, previous) => {
      if (fn !== 'worker' || previous !== 0) return;
      if (service === 'S3') pipeline.standIns.s3.injectFault({ times: 3, methods: ['PUT'], keyPrefix: `campaigns/${CAMPAIGN}/generate/replies/` });
      // Workers run side by side: enough refusals that one of their calls is refused three times.
      else pipeline.standIns.dynamo.injectFault({ times: 12, type: 'ProvisionedThroughputExceededException' });
    };
    // act: one execution, as `sondage start --aws`
    const run = await pipeline.execute({ campaign: CAMPAIGN });
    // assess: one worker invocation failed with the retryable error, and the execution went on to the end
    const failed = pipeline.fleet.of('worker').filter((i) => i.outcome !== 'ok');
    expect(failed.length).toBeGreaterThan(0);
    for (const i of failed) expect(i.error).toMatch(/^TransientAwsError: worker: a transient AWS failure past the SDK's retries/);
    expect(await pipeline.ledger.failures(CAMPAIGN)).toEqual([]);
    await expectIntact(pipeline, [run]);
  });

  it('Secrets Manager unavailable: at the plan\'s first read (the execution fails), then at a worker\'s cold start (its batch is invoked again)', async () => {
    const pipeline = await deploy();
    pipeline.standIns.secrets.unavailable = 3;
    pipeline.fleet.onInvoke = (fn, previous) => {
      if (fn === 'worker' && previous === 0) pipeline.standIns.secrets.unavailable = 3;
    };
    const runs = await runToTheEnd(pipeline);
    // The worker failed before it asked or reserved anything, on a 500 of Secrets Manager: a transient fault, retried in the execution.
    expect(runs.map((r) => r.result.status)).toEqual(['FAILED', 'SUCCEEDED']);
    expect(pipeline.fleet.of('worker').filter((i) => i.outcome !== 'ok').map((i) => i.error)).toEqual([expect.stringMatching(/^TransientAwsError: .*provider keys: cannot read secret/)]);
    // The plan's failure names the secret.
    await expectRecordedFailures(pipeline, runs, /cannot read secret/);
    expect((await pipeline.ledger.failures(CAMPAIGN)).some((f) => /provider keys: cannot read secret/.test(f.cause))).toBe(true);
    await expectIntact(pipeline, runs);
  });
});
