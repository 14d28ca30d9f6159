import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPhaseGraph } from '../../lib/battery/phaseGraph.js';
import type { PhaseSpec } from '../../lib/battery/types.js';
import { far6 } from '../../lib/batteries/far6/index.js';
import { FUNCTION_SIZING } from '../../lib/config/sizing.js';
import type { Campaign } from '../../lib/design/campaign.js';
import type { RunContext } from '../../lib/run/context.js';
import { writeFullSizeCampaign } from '../../bench/fullSizeCampaign.js';
import { LANGUAGES } from '../../lib/batteries/far6/types.js';
import { CampaignFileError } from '../../lib/errors.js';
import { DEFAULT_AWS_COST_ASSUMPTIONS, estimateAcrossLatencies, estimateAwsCost, formatAwsCost, loadAwsPrices } from '../../lib/run/awsCost.js';
import type { AwsCostEstimate } from '../../lib/run/awsCost.js';
import { planCampaign } from '../../lib/run/planCampaign.js';
import type { Plan } from '../../lib/run/planCampaign.js';
import { CALLS_PER_COPY, MAX_WORKER_COPIES } from '../../lib/run/shards.js';
import { loadContext, tempDir } from '../helpers/campaigns.js';

const prices = loadAwsPrices();
const ARM = prices.lambda.gb_second.arm64;

/** A generate phase and the judge phase after it, as the estimate reads a battery's graph. */
const PHASES: PhaseSpec[] = [
  { name: 'generate', after: [], answeredBy: 'subject', expand: () => [], read: () => [] },
  {
    name: 'judge',
    after: [{ phase: 'generate', take: ['reply'] }],
    answeredBy: { role: 'judge' },
    expand: () => [],
    read: () => [],
    estimate: () => ({ items: 0, inputTokens: 0, outputTokens: 0, maxInputTokens: 0, maxOutputTokens: 0 }),
  },
];

/** A plan of one model over the given partitions (generate only unless `judged`), and the campaign fields the estimate reads. */
function fixture(
  partitions: readonly { items: number; judged?: number }[],
  model: { mode?: 'sync' | 'batch'; rpm?: number } = {},
  concurrency = 2 * CALLS_PER_COPY,
): { plan: Plan; campaign: Pick<RunContext, 'campaign' | 'battery' | 'graph'> } {
  const parts = partitions.map((p, i) => ({ model: 'a', language: LANGUAGES[i]!, items: { generate: p.items, judge: p.judged ?? 0 } }));
  const items = parts.reduce((s, p) => s + p.items.generate, 0);
  const plan: Plan = {
    campaign: 'c',
    battery: 'far6',
    budgetUsd: 1000,
    phases: ['generate', 'judge'],
    lines: [{ model: 'a', phase: 'generate', provider: 'openai', items, inputTokens: 0, outputTokens: 0, costUsd: 100, batchCostUsd: null, maxCostUsd: 200 }],
    totals: { items, costUsd: 100, maxCostUsd: 200 },
    partitions: parts,
  };
  const entry = { id: 'a', mode: model.mode ?? 'sync', ...(model.rpm === undefined ? {} : { rpm: model.rpm }) };
  const judge = { id: 'judge', mode: 'sync' };
  const campaign = { concurrency, models: [entry], roles: { judge } } as unknown as Campaign;
  return { plan, campaign: { campaign, battery: far6, graph: checkPhaseGraph('far6', PHASES, far6.roles, 'test.yaml') } };
}

const line = (est: AwsCostEstimate, service: string, stage: string, unit: string) => est.lines.find((l) => l.service === service && l.stage === stage && l.unit === unit);

describe('estimateAwsCost: the arithmetic', () => {
  it('prices a synchronous phase: copies keep CALLS_PER_COPY calls in flight, Lambda bills the wall time at the worker size', () => {
    // prepare: 10,000 items, concurrency 128 → 2 copies of 64 calls; no RPM → 2,000-item shards
    const { plan, campaign } = fixture([{ items: 10_000 }]);
    // act
    const est = estimateAwsCost(plan, campaign, {}, prices);
    // assess: 5 shards → 2 ItemBatcher batches (2 invocations); 10,000 × 1.5 s / 64 = 234.4 s of
    // calls, plus 4 s overhead each
    expect(CALLS_PER_COPY).toBe(64);
    expect(est.stages).toEqual([{ stage: 'generate', shards: 5, invocations: 2, copies: 2, callsPerCopy: 64 }]);
    const seconds = (10_000 * 1.5) / 64 + 2 * 4;
    expect(line(est, 'Lambda', 'generate', 'GB-s')?.quantity).toBeCloseTo((seconds * FUNCTION_SIZING.worker.memoryMb) / 1024, 6);
    expect(line(est, 'Lambda', 'generate', 'GB-s')?.usd).toBeCloseTo(seconds * ARM, 9);
    // Each child: Invoke, Choice, Succeed; the second invocation is a loop turn (Wait, Invoke, Choice)
    expect(line(est, 'Step Functions', 'generate', 'transitions')?.quantity).toBe(6);
    // 2 write units per item (registered once, marked done), 6 per chunk (157 chunks of 64 plus one
    // partial per shard), 5 per shard
    expect(line(est, 'DynamoDB', 'generate', 'WRU')?.quantity).toBe(10_000 * 2 + (157 + 5) * 6 + 5 * 5);
    expect(line(est, 'DynamoDB', 'generate', 'WRU')?.usd).toBeCloseTo(((10_000 * 2 + 162 * 6 + 25) / 1e6) * prices.dynamodb.per_million_write_request_units, 12);
    // Athena: every SQL file and the report's stored-spend sum over the ceiling of the Parquet, at least 10 MB a query
    expect(line(est, 'Athena', 'analysis', 'bytes')?.quantity).toBe((far6.analysis.sql.allQueries().length + 1) * 10e6);
    expect(est.totalUsd).toBeCloseTo(
      est.lines.reduce((s, l) => s + l.usd, 0),
      12,
    );
    expect(est.share).toBeCloseTo(est.totalUsd / 100, 12);
  });

  it('prices a per-model query once for each model under test, each run at least Athena\'s minimum', () => {
    // prepare: the fixture's plan with three models under test, analysed by a battery whose first query runs per model
    const { plan, campaign } = fixture([{ items: 10_000 }, { items: 10_000 }, { items: 10_000 }]);
    const three: Plan = { ...plan, lines: plan.lines.map((l) => ({ ...l, items: 90_000 })), partitions: plan.partitions.map((p, i) => ({ ...p, model: ['a', 'b', 'c'][i]! })) };
    const [first, ...rest] = far6.analysis.sql.allQueries();
    const perModel = { ...campaign, battery: { ...far6, analysis: { ...far6.analysis, perModelQueries: [first!] } } };
    // act
    const once = estimateAwsCost(three, campaign, {}, prices);
    const each = estimateAwsCost(three, perModel, {}, prices);
    // assess: the query runs three times, each over a model's third of the Parquet (B bytes in all,
    // above Athena's 10 MB minimum here); the other queries and the spend sum once each, over all of it
    const b = once.athenaBytesPerQuery;
    expect(b / 3).toBeGreaterThan(10e6);
    expect(line(once, 'Athena', 'analysis', 'bytes')?.quantity).toBeCloseTo((rest.length + 2) * b, 3);
    expect(line(each, 'Athena', 'analysis', 'bytes')?.quantity).toBeCloseTo((rest.length + 1) * b + 3 * (b / 3), 3);
    // a small campaign: each of the three runs is billed Athena's minimum
    const tiny: Plan = { ...three, lines: three.lines.map((l) => ({ ...l, items: 300 })) };
    const tinyEach = estimateAwsCost(tiny, perModel, {}, prices);
    expect(line(tinyEach, 'Athena', 'analysis', 'bytes')?.quantity).toBeCloseTo((rest.length + 1) * 10e6 + 3 * 10e6, 3);
    expect(line(each, 'Lambda', 'analysis', 'GB-s')!.quantity).toBeGreaterThan(line(once, 'Lambda', 'analysis', 'GB-s')!.quantity);
  });

  it('slows a copy to its share of the RPM, and pays the Lambda time spent waiting', () => {
    // prepare: rpm 600 over 2 copies = 5 calls/s per copy (below 64 / 1.5 s), shards of 3 minutes = 900 items
    const fast = fixture([{ items: 10_000 }]);
    const limited = fixture([{ items: 10_000 }], { rpm: 600 });
    // act
    const a = estimateAwsCost(fast.plan, fast.campaign, {}, prices);
    const b = estimateAwsCost(limited.plan, limited.campaign, {}, prices);
    // assess: 10,000 / 5 = 2,000 s over 12 shards (3 batches, 3 invocations)
    expect(b.stages[0]).toMatchObject({ shards: 12, invocations: 3 });
    expect(line(b, 'Lambda', 'generate', 'GB-s')?.quantity).toBeCloseTo(2000 + 3 * 4, 6);
    expect(b.totalUsd).toBeGreaterThan(a.totalUsd);
  });

  it('prices a provider-batch phase as one submission and a short invocation per poll', () => {
    const { plan, campaign } = fixture([{ items: 10_000 }], { mode: 'batch' });
    const est = estimateAwsCost(plan, campaign, { batchHours: 2 }, prices);
    // One shard per partition; 2 h of polls every 300 s = 24 polls after the submission
    expect(est.stages[0]).toMatchObject({ shards: 1, invocations: 25 });
    expect(line(est, 'Lambda', 'generate', 'GB-s')?.quantity).toBeCloseTo(10_000 * 0.002 + 25 * 4, 6);
    expect(line(est, 'Step Functions', 'generate', 'transitions')?.quantity).toBe(75);
  });

  it('prices the judge phase over the judged replies, with shards cut on the judged model’s items', () => {
    const { plan, campaign } = fixture([{ items: 4000, judged: 1000 }, { items: 1000, judged: 0 }]);
    const est = estimateAwsCost(plan, campaign, {}, prices);
    expect(est.stages.map((s) => [s.stage, s.shards])).toEqual([
      ['generate', 3],
      ['judge', 2],
    ]);
    expect(line(est, 'DynamoDB', 'judge', 'RRU')?.quantity).toBe(1000 * 3);
  });

  it('bills the plan for its registration, never past its timeout (it leaves the rest to the workers), and a short turn per further wave', () => {
    const small = fixture([{ items: 10_000 }]);
    const huge = fixture([{ items: 2_000_000 }]);
    const gbs = (est: ReturnType<typeof estimateAwsCost>) => line(est, 'Lambda', 'plan', 'GB-s')?.quantity;
    // Two waves (generate, then judge): the first plans and registers, each further turn (the
    // judge's wave, and the one that finds nothing left) takes the invocation overhead of 4 s.
    expect(gbs(estimateAwsCost(small.plan, small.campaign, {}, prices))).toBeCloseTo(((10_000 / 1000 + 4 + 2 * 4) * FUNCTION_SIZING.plan.memoryMb) / 1024, 6);
    expect(gbs(estimateAwsCost(huge.plan, huge.campaign, {}, prices))).toBeCloseTo(((FUNCTION_SIZING.plan.timeoutSeconds + 2 * 4) * FUNCTION_SIZING.plan.memoryMb) / 1024, 6);
    expect(line(estimateAwsCost(small.plan, small.campaign, {}, prices), 'Lambda', 'plan', 'requests')?.quantity).toBe(3);
  });

  it('warns when an analysis query would pass the workgroup cutoff', () => {
    const { plan, campaign } = fixture([{ items: 10_000 }]);
    const est = estimateAwsCost(plan, campaign, { parquetBytesPerReply: 2e6 }, prices);
    expect(est.cutoffExceeded).toBe(true);
    expect(formatAwsCost(est)).toMatch(/warning: an analysis query may scan 20 GB, past the workgroup's cutoff/);
  });

  it('sizes the worker the way the plan handler caps its copies', () => {
    expect(FUNCTION_SIZING.worker.reservedConcurrency).toBe(MAX_WORKER_COPIES);
  });
});

describe('the FAR-6 inventory at full size', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('aws-cost'));
  });
  afterAll(() => cleanup());

  it('costs under 1 % of the model spend on AWS at 1.5 s a call, under 2 % at 6 s (bench/local-throughput: 8 models × 6 languages × 105 stories)', async () => {
    // prepare: bench/local-throughput's campaign on 5 of its 105 stories, then the plan scaled by 21.
    // Every partition grows 21-fold, so shards, invocations and bytes are those of the full run.
    await writeFullSizeCampaign(dir, { stories: 5 });
    const ctx = await loadContext(path.join(dir, 'campaign.yaml'));
    const small = planCampaign(ctx);
    const k = 21;
    const scale = <T extends { items: number }>(x: T, extra: (keyof T)[] = []): T => {
      const out: Record<string, unknown> = { ...x, items: x.items * k };
      for (const key of extra) out[key as string] = (x[key] as number) * k;
      return out as T;
    };
    const full: Plan = {
      ...small,
      lines: small.lines.map((l) => scale(l, ['inputTokens', 'outputTokens', 'costUsd', 'maxCostUsd'])),
      partitions: small.partitions.map((p) => ({ ...p, items: Object.fromEntries(Object.entries(p.items).map(([phase, n]) => [phase, n * k])) })),
      totals: scale(small.totals, ['costUsd', 'maxCostUsd']),
    };
    // act
    const est = estimateAwsCost(full, ctx, {}, prices);
    // assess: about a million replies, each priced with the default 1.5 s a call (the simulated
    // models stand in for API models), and the whole machinery under 1 % of the model spend; with
    // calls of 6 s, which Lambda bills as the worker waits, under 2 %
    const replies = full.partitions.reduce((s, p) => s + p.items['generate']!, 0);
    expect(replies).toBeGreaterThan(900_000);
    expect(est.modelUsd).toBeCloseTo(small.totals.costUsd * k, 6);
    expect(est.share).toBeLessThan(0.01);
    const slow = estimateAcrossLatencies(full, ctx, {}, prices).find((s) => s.callSeconds === 6)!;
    expect(slow.share).toBeLessThan(0.02);
    expect(est.cutoffExceeded).toBe(false);
    // and not because something was left out: every service the issue names is priced
    expect(new Set(est.lines.map((l) => l.service))).toEqual(new Set(['Lambda', 'Step Functions', 'S3', 'DynamoDB', 'Athena', 'CloudWatch Logs', 'X-Ray']));
    expect(DEFAULT_AWS_COST_ASSUMPTIONS.callSeconds).toBeGreaterThanOrEqual(1);
  });
});

describe('loadAwsPrices', () => {
  it('says which file and which field is wrong', async () => {
    const { dir, cleanup } = await tempDir('aws-prices');
    try {
      const file = path.join(dir, 'prices.json');
      const raw = { ...JSON.parse(JSON.stringify(prices)) as Record<string, unknown> };
      (raw.lambda as { gb_second: Record<string, unknown> }).gb_second.arm64 = 'cheap';
      await writeFile(file, JSON.stringify(raw));
      expect(() => loadAwsPrices(file)).toThrow(CampaignFileError);
      expect(() => loadAwsPrices(file)).toThrow(`${file}: lambda.gb_second.arm64: expected number`);
      await writeFile(file, '{ not json');
      expect(() => loadAwsPrices(file)).toThrow(/cannot read the AWS price file as JSON/);
    } finally {
      await cleanup();
    }
  });

  it('ships dated us-east-1 prices marked unverified', () => {
    expect(prices).toMatchObject({ region: 'us-east-1', verified: false });
    expect(prices.version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('the overhead with its assumptions shown and varied', () => {
  it('prices storage and X-Ray, and grows with the call latency while the model cost stays', () => {
    // prepare: 10,000 items, one phase
    const { plan, campaign } = fixture([{ items: 10_000 }]);
    // act
    const est = estimateAwsCost(plan, campaign, {}, prices);
    const scenarios = estimateAcrossLatencies(plan, campaign, {}, prices);
    // assess: a month of 700 bytes per reply in S3 Standard; one trace per worker invocation
    const gb = (10_000 * DEFAULT_AWS_COST_ASSUMPTIONS.parquetBytesPerReply) / 1e9;
    expect(line(est, 'S3', 'storage', 'GB-months')?.usd).toBeCloseTo(gb * prices.s3.per_gb_month, 12);
    expect(line(est, 'X-Ray', 'generate', 'traces')?.quantity).toBe(est.stages[0]!.invocations);
    expect(scenarios.map((s) => s.callSeconds)).toEqual([1.5, 3, 6]);
    expect(scenarios[0]!.totalUsd).toBeCloseTo(est.totalUsd, 12);
    expect(scenarios[1]!.totalUsd).toBeGreaterThan(scenarios[0]!.totalUsd);
    expect(scenarios[2]!.totalUsd).toBeGreaterThan(scenarios[1]!.totalUsd);
    expect(scenarios[2]!.share).toBeCloseTo(scenarios[2]!.totalUsd / est.modelUsd, 12);
    // The Lambda wait doubles with the latency (940 s → 1,875 s of calls in two invocations, then four).
    const gbs = (s: number) => line(estimateAwsCost(plan, campaign, { callSeconds: s }, prices), 'Lambda', 'generate', 'GB-s')!.quantity;
    expect(gbs(3) / gbs(1.5)).toBeGreaterThan(1.9);
  });

  it('prints the assumptions and the latency table under the total', () => {
    const { plan, campaign } = fixture([{ items: 10_000 }]);
    const text = formatAwsCost(estimateAwsCost(plan, campaign, { storageMonths: 6 }, prices), estimateAcrossLatencies(plan, campaign, {}, prices));
    expect(text).toContain('assumed: a call keeps its slot 1.5 s');
    expect(text).toContain('stored 6 months');
    expect(text).toContain('no NAT gateway');
    expect(text).toMatch(/if calls are slower \(Lambda bills the wait\): 1\.5 s → \$[\d.]+ \([\d.]+ %\); 3 s → \$[\d.]+ \([\d.]+ %\); 6 s → /);
  });
});
