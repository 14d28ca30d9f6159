/**
 * What the AWS machinery costs around the model calls: Lambda
 * GB-seconds and requests, Step Functions state transitions, S3 requests, DynamoDB request units,
 * Athena bytes scanned and CloudWatch Logs ingestion, for one execution of a planned campaign.
 * Pure arithmetic over the plan, the campaign, the stack's sizing (lib/config/sizing.ts) and the
 * shard rules the plan handler uses (lib/run/shards.ts); prices come from awsPrices.json.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { PhaseSpec } from '../battery/types.js';
import { DEFAULT_BYTES_SCANNED_CUTOFF } from '../config/index.js';
import { FUNCTION_SIZING, SHARDS_PER_BATCH } from '../config/sizing.js';
import type { FunctionSizing } from '../config/sizing.js';
import type { ModelEntry } from '../design/campaign.js';
import { CampaignFileError, formatIssues } from '../errors.js';
import { answererOf } from './context.js';
import type { RunContext } from './context.js';
import type { Plan } from './planCampaign.js';
import { callsPerCopy, pollSeconds, shardItems, slices, waveCopies } from './shards.js';

/** What the estimate needs of a loaded campaign. */
type CostContext = Pick<RunContext, 'campaign' | 'battery' | 'graph'>;

const PRICES_FILE = fileURLToPath(new URL('./awsPrices.json', import.meta.url));

const rate = z.number().nonnegative();
const pricesSchema = z.object({
  version: z.string().min(1),
  region: z.string().min(1),
  as_of: z.string().min(1),
  verified: z.boolean(),
  note: z.string().optional(),
  lambda: z.object({ gb_second: z.object({ x86_64: rate, arm64: rate }), per_million_requests: rate }),
  step_functions: z.object({ per_thousand_standard_transitions: rate }),
  s3: z.object({ per_thousand_put_copy_post_list: rate, per_thousand_get: rate, per_gb_month: rate }),
  dynamodb: z.object({ per_million_write_request_units: rate, per_million_read_request_units: rate }),
  athena: z.object({ per_terabyte_scanned: rate, minimum_megabytes_per_query: rate }),
  cloudwatch_logs: z.object({ per_gb_ingested: rate }),
  nat_gateway: z.object({ per_hour: rate, per_gb_processed: rate }),
  xray: z.object({ per_million_traces_recorded: rate }),
});

/** AWS list prices in one region, as awsPrices.json holds them. */
export type AwsPrices = z.output<typeof pricesSchema>;

/**
 * Reads and checks a price file (default: lib/run/awsPrices.json). A wrong file throws a
 * CampaignFileError naming the file, the field and what was expected.
 * @example const prices = loadAwsPrices(); prices.lambda.gb_second.arm64 // 0.0000133334
 */
export function loadAwsPrices(file: string = PRICES_FILE): AwsPrices {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const issue = { file, path: '', message: `cannot read the AWS price file as JSON (${(err as Error).message})` };
    throw new CampaignFileError(formatIssues([issue]), [issue], { cause: err });
  }
  const parsed = pricesSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ file, path: i.path.join('.'), message: `expected ${i.message.replace(/^Invalid input: expected /, '')}` }));
    throw new CampaignFileError(formatIssues(issues), issues);
  }
  return parsed.data;
}

/**
 * The quantities that are not in the plan. Every one is a documented guess, overridable; the
 * defaults lean high, so the estimate is a ceiling rather than a hope.
 */
export interface AwsCostAssumptions {
  /** Seconds a synchronous call keeps its slot (one-sentence replies; simulated models are priced as the API models they stand in for). */
  readonly callSeconds: number;
  /** Worker seconds per item of a provider-batch shard (write the request line, read the result line). */
  readonly batchItemSeconds: number;
  /** Hours a provider batch takes to finish (providers promise 24 h; most finish within a few). */
  readonly batchHours: number;
  /** Seconds of each worker invocation spent outside calls: start, campaign download, expansion, part commit. */
  readonly invocationOverheadSeconds: number;
  /**
   * Item registrations per second in the plan Lambda. DynamoLedger puts 25 items per BatchWriteItem,
   * 32 requests in flight (~50,000 items/s of round trips); the bound is DynamoDB's 1,000 WRU/s for
   * the one partition key that holds a phase's items, until DynamoDB splits it for heat.
   */
  readonly planWritesPerSecond: number;
  /**
   * DynamoDB write units per item: registered once (a BatchWriteItem put: the plan registers generate
   * items, the worker judge items; later registrations find them known and only read), marked done.
   */
  readonly writeUnitsPerItem: number;
  /** Read units per item: the registration's check for known ids, pending checks by the plan (or the judge's done marker) and the worker (consistent BatchGetItem, 1 unit per item). */
  readonly readUnitsPerItem: number;
  /** Items per budget reservation (the worker's chunk size). */
  readonly itemsPerChunk: number;
  /** Compressed Parquet bytes per reply across prompts, replies and readings (Athena reads at most this much per query). */
  readonly parquetBytesPerReply: number;
  /** Bytes of CloudWatch Logs per state transition (Step Functions logs at level ALL, without execution data). */
  readonly logBytesPerTransition: number;
  /** Bytes of CloudWatch Logs per Lambda invocation (START/END/REPORT and a few structured lines). */
  readonly logBytesPerInvocation: number;
  /**
   * Months the campaign's Parquet stays in S3 Standard (the bucket keeps it until `sondage purge`;
   * scratch and Athena results expire on their own and are left out).
   */
  readonly storageMonths: number;
}

export const DEFAULT_AWS_COST_ASSUMPTIONS: AwsCostAssumptions = {
  callSeconds: 1.5,
  batchItemSeconds: 0.002,
  batchHours: 4,
  invocationOverheadSeconds: 4,
  planWritesPerSecond: 1000,
  writeUnitsPerItem: 2,
  readUnitsPerItem: 3,
  itemsPerChunk: 64,
  parquetBytesPerReply: 700,
  logBytesPerTransition: 1000,
  logBytesPerInvocation: 2000,
  storageMonths: 1,
};

/** The call latencies `plan --aws` varies (seconds a call keeps its slot): the Lambda time, and so most of the overhead, scales with them. */
export const LATENCY_SCENARIOS: readonly number[] = [1.5, 3, 6];

export type AwsService = 'Lambda' | 'Step Functions' | 'S3' | 'DynamoDB' | 'Athena' | 'CloudWatch Logs' | 'X-Ray';

export interface AwsCostLine {
  readonly service: AwsService;
  /** `plan`, a phase of the battery (`generate`, `judge`, …), `analysis`. */
  readonly stage: string;
  readonly quantity: number;
  /** What `quantity` counts: `GB-s`, `requests`, `transitions`, `PUT`, `GET`, `WRU`, `RRU`, `bytes`, `GB-months`, `traces`. */
  readonly unit: string;
  readonly usd: number;
}

export interface AwsCostEstimate {
  readonly prices: Pick<AwsPrices, 'version' | 'region' | 'as_of' | 'verified'>;
  readonly lines: readonly AwsCostLine[];
  readonly totalUsd: number;
  /** The plan's expected model cost. */
  readonly modelUsd: number;
  /** totalUsd / modelUsd (Infinity when the models cost nothing). */
  readonly share: number;
  /** Per stage: worker invocations, shards and copies, for the reader who wants to check the arithmetic. */
  readonly stages: readonly { readonly stage: string; readonly shards: number; readonly invocations: number; readonly copies: number; readonly callsPerCopy: number }[];
  /** Athena bytes one analysis query may scan, and whether the workgroup cutoff would cancel it. */
  readonly athenaBytesPerQuery: number;
  readonly cutoffExceeded: boolean;
  /** The assumptions the estimate used (defaults with the caller's overrides). */
  readonly assumptions: AwsCostAssumptions;
}

interface PhaseWork {
  readonly phase: string;
  readonly items: number;
  readonly shards: number;
  readonly invocations: number;
  readonly workerSeconds: number;
  readonly copies: number;
  readonly callsPerCopy: number;
}

/** Items, shards, invocations and worker seconds of one phase, cut as the plan cuts it (lib/run/planWave.ts). */
function phaseWork(plan: Plan, ctx: CostContext, phase: PhaseSpec, a: AwsCostAssumptions): PhaseWork {
  const { campaign } = ctx;
  const wave = ctx.graph.waves.find((w) => w.includes(phase)) ?? [phase];
  const copies = waveCopies(ctx, wave);
  const inFlight = callsPerCopy(campaign, copies);
  const usableSeconds = FUNCTION_SIZING.worker.timeoutSeconds - 60; // the worker stops ~60 s before its timeout
  const byId = new Map<string, ModelEntry>(campaign.models.map((m) => [m.id, m]));
  const source = phase.after[0]?.phase;
  let items = 0;
  let shards = 0;
  let invocations = 0;
  let workerSeconds = 0;
  // Shards of one answering entry over one model under test: cut per partition.
  const groups = new Map<ModelEntry, { items: number; shards: number }>();
  for (const p of plan.partitions) {
    const model = byId.get(p.model);
    const calls = p.items[phase.name] ?? 0;
    if (!model || calls === 0) continue;
    const entry = answererOf(ctx, phase, model);
    // A runs_on: gpu model's items run in AWS Batch jobs, not Lambda: lib/run/gpuCost.ts prices them.
    if (entry.runs_on === 'gpu') continue;
    // A root phase is cut over its items, a dependent one over its source items, or one shard a partition.
    const cutOver = source === undefined ? calls : (p.items[source] ?? calls);
    const size = entry.mode === 'batch' || (phase.shard ?? 'by-source') === 'partition' ? Math.max(1, cutOver) : shardItems(entry, copies);
    const g = groups.get(entry) ?? { items: 0, shards: 0 };
    g.items += calls;
    g.shards += slices(cutOver, size).length;
    groups.set(entry, g);
  }
  for (const [entry, g] of groups) {
    items += g.items;
    shards += g.shards;
    const batches = Math.ceil(g.shards / SHARDS_PER_BATCH);
    if (entry.mode === 'batch') {
      // Submit, then one short invocation per poll until the provider batch is done.
      const polls = Math.ceil((a.batchHours * 3600) / pollSeconds(ctx, wave));
      const calls = batches * (1 + polls);
      invocations += calls;
      workerSeconds += g.items * a.batchItemSeconds + calls * a.invocationOverheadSeconds;
    } else {
      // A copy runs `inFlight` calls at once, or fewer when its share of the RPM is the limit.
      const perCopyPerSecond = Math.min(inFlight / a.callSeconds, entry.rpm === undefined ? Infinity : entry.rpm / copies / 60);
      const callSeconds = g.items / perCopyPerSecond;
      const calls = Math.max(batches, Math.ceil(callSeconds / usableSeconds));
      invocations += calls;
      workerSeconds += callSeconds + calls * a.invocationOverheadSeconds;
    }
  }
  return { phase: phase.name, items, shards, invocations, workerSeconds, copies, callsPerCopy: inFlight };
}

const gbSeconds = (seconds: number, sizing: FunctionSizing): number => (seconds * sizing.memoryMb) / 1024;

/**
 * The AWS cost of one execution of `plan` on the deployed stack, beside the model cost.
 * @example
 * const est = estimateAwsCost(planCampaign(ctx), ctx);
 * console.log(formatAwsCost(est)); // … AWS 1.1 % of the model cost
 */
export function estimateAwsCost(
  plan: Plan,
  ctx: CostContext,
  assumptions: Partial<AwsCostAssumptions> = {},
  prices: AwsPrices = loadAwsPrices(),
): AwsCostEstimate {
  const a = { ...DEFAULT_AWS_COST_ASSUMPTIONS, ...assumptions };
  const lines: AwsCostLine[] = [];
  const add = (service: AwsService, stage: string, quantity: number, unit: string, usd: number): void => {
    if (quantity > 0) lines.push({ service, stage, quantity, unit, usd });
  };
  const lambda = (stage: string, seconds: number, invocations: number, sizing: FunctionSizing): void => {
    const gbs = gbSeconds(seconds, sizing);
    add('Lambda', stage, gbs, 'GB-s', gbs * prices.lambda.gb_second[sizing.architecture]);
    add('Lambda', stage, invocations, 'requests', (invocations / 1e6) * prices.lambda.per_million_requests);
  };
  const transitions = (stage: string, n: number): void => {
    add('Step Functions', stage, n, 'transitions', (n / 1000) * prices.step_functions.per_thousand_standard_transitions);
    add('CloudWatch Logs', stage, n * a.logBytesPerTransition, 'bytes', ((n * a.logBytesPerTransition) / 1e9) * prices.cloudwatch_logs.per_gb_ingested);
  };
  const s3 = (stage: string, puts: number, gets: number): void => {
    add('S3', stage, puts, 'PUT', (puts / 1000) * prices.s3.per_thousand_put_copy_post_list);
    add('S3', stage, gets, 'GET', (gets / 1000) * prices.s3.per_thousand_get);
  };
  const dynamo = (stage: string, wru: number, rru: number): void => {
    add('DynamoDB', stage, wru, 'WRU', (wru / 1e6) * prices.dynamodb.per_million_write_request_units);
    add('DynamoDB', stage, rru, 'RRU', (rru / 1e6) * prices.dynamodb.per_million_read_request_units);
  };
  const lambdaLogs = (stage: string, invocations: number): void => {
    const bytes = invocations * a.logBytesPerInvocation;
    add('CloudWatch Logs', stage, bytes, 'bytes', (bytes / 1e9) * prices.cloudwatch_logs.per_gb_ingested);
    // Every function traces actively (infra/constructs/Handler.ts): one trace recorded per invocation.
    add('X-Ray', stage, invocations, 'traces', (invocations / 1e6) * prices.xray.per_million_traces_recorded);
  };

  const rootPhases = ctx.graph.phases.filter((p) => p.after.length === 0).map((p) => p.name);
  const rootItems = plan.partitions.reduce((s, p) => s + rootPhases.reduce((n, phase) => n + (p.items[phase] ?? 0), 0), 0);
  const modelLanguages = plan.partitions.length;
  const waves = ctx.graph.waves.length;

  // plan: expand, write prompts (one part per root partition), register every root item; then one
  // short invocation per further wave (and one that finds nothing left).
  // The plan stops registering before its timeout (lib/run/planWave.ts PLAN_RESERVE_MS) and leaves
  // the rest to the workers: the same write units, at most the plan's timeout of Lambda time.
  lambda('plan', Math.min(FUNCTION_SIZING.plan.timeoutSeconds, rootItems / a.planWritesPerSecond + a.invocationOverheadSeconds) + waves * a.invocationOverheadSeconds, waves + 1, FUNCTION_SIZING.plan);
  lambdaLogs('plan', waves + 1);
  // Prompt parts and registered markers per root partition, plan.json, two manifests and a marker list per wave; campaign input files per plan.
  s3('plan', 2 * modelLanguages * rootPhases.length + 1 + 2 * (waves + 1), (waves + 1) * (4 + 1));
  // Parent execution: per wave Plan, two Choices, the Map and the Pass to the next wave; then Athena, Report, Done.
  transitions('plan', 5 * (waves + 1) + 3);

  const stages: PhaseWork[] = [];
  for (const phase of ctx.graph.phases) {
    const w = phaseWork(plan, ctx, phase, a);
    if (w.items === 0) continue;
    stages.push(w);
    const stage = phase.name;
    const dependent = phase.after.length > 0;
    lambda(stage, w.workerSeconds, w.invocations, FUNCTION_SIZING.worker);
    lambdaLogs(stage, w.invocations);
    // Each child runs Invoke → Choice and ends in Succeed; every `again` adds Wait → Invoke → Choice.
    transitions(stage, 3 * w.invocations);
    // Per invocation: the campaign input (3 files), and for a dependent phase the partition's input
    // parts (~1 per shard and input); per shard: a replies part and a readings part, plus the done
    // marker and the prompts part of a dependent phase; the Map reads its manifest and writes its
    // result files. Journals stay in the worker's /tmp (committed as parts before it returns), so
    // they cost no S3 request. A root shard also asks whether its partition is registered (one HEAD, priced as a GET).
    const gets = 3 * w.invocations + w.shards * (dependent ? phase.after.length : 1) + 1;
    const puts = 2 * w.shards + (dependent ? 2 * w.shards : 0) + 2 + Math.ceil(w.invocations / 1000);
    s3(stage, puts, gets);
    // Per item: the units in writeUnitsPerItem/readUnitsPerItem; per chunk: the reservation
    // (a transaction of two items: 4 units) and its settlement in the part's transaction (2 units
    // per deleted reservation); per shard: the part record, the budget update and the mark (5 units).
    const chunks = Math.ceil(w.items / a.itemsPerChunk) + w.shards;
    dynamo(stage, w.items * a.writeUnitsPerItem + chunks * 6 + w.shards * 5, w.items * a.readUnitsPerItem);
  }

  // analysis: the state machine's query, reused by the report; the report runs every other SQL file
  // over at most all three tables' Parquet (Athena reads fewer columns; this is the ceiling).
  const replies = plan.lines.reduce((s, l) => s + l.items, 0);
  const athenaBytesPerQuery = replies * a.parquetBytesPerReply;
  const billedPerQuery = Math.max(athenaBytesPerQuery, prices.athena.minimum_megabytes_per_query * 1e6);
  // The battery's queries, and the stored replies' cost for the report's spend (lib/analysis/storedSpend.ts).
  // A per-model query runs once for each model under test, over about that model's share of the
  // Parquet, each run billed at least Athena's minimum.
  const perModel = new Set(ctx.battery.analysis.perModelQueries ?? []);
  const once = ctx.battery.analysis.sql.allQueries().filter((q) => !perModel.has(q)).length + 1;
  const modelsUnderTest = new Set(plan.partitions.map((p) => p.model)).size;
  const perModelRuns = perModel.size * modelsUnderTest;
  const billedPerModelRun = Math.max(athenaBytesPerQuery / Math.max(1, modelsUnderTest), prices.athena.minimum_megabytes_per_query * 1e6);
  const queries = once + perModelRuns;
  const billedBytes = once * billedPerQuery + perModelRuns * billedPerModelRun;
  add('Athena', 'analysis', billedBytes, 'bytes', (billedBytes / 1e12) * prices.athena.per_terabyte_scanned);
  // Each query reads every part file's footer and row groups (~3 GETs a file) and writes its result.
  const partFiles = modelLanguages * 3 + stages.reduce((s, w) => s + 2 * w.shards, 0);
  s3('analysis', queries + 6, queries * partFiles * 3);
  lambda('analysis', 60 + queries * 5, 1, FUNCTION_SIZING.report);
  lambdaLogs('analysis', 1);
  // What stays: the Parquet of every reply (prompts, replies, readings), kept until purged.
  const storedGb = (replies * a.parquetBytesPerReply) / 1e9;
  add('S3', 'storage', storedGb * a.storageMonths, 'GB-months', storedGb * a.storageMonths * prices.s3.per_gb_month);

  const totalUsd = lines.reduce((s, l) => s + l.usd, 0);
  const modelUsd = plan.totals.costUsd;
  return {
    prices: { version: prices.version, region: prices.region, as_of: prices.as_of, verified: prices.verified },
    lines,
    totalUsd,
    modelUsd,
    share: modelUsd > 0 ? totalUsd / modelUsd : Infinity,
    stages: stages.map((w) => ({ stage: w.phase, shards: w.shards, invocations: w.invocations, copies: w.copies, callsPerCopy: w.callsPerCopy })),
    athenaBytesPerQuery,
    cutoffExceeded: athenaBytesPerQuery > DEFAULT_BYTES_SCANNED_CUTOFF,
    assumptions: a,
  };
}

/** One row of the latency table: the estimate's total and share at one call latency. */
export interface LatencyScenario {
  readonly callSeconds: number;
  readonly totalUsd: number;
  readonly share: number;
}

/**
 * The estimate again at each call latency of LATENCY_SCENARIOS (the other assumptions as given):
 * slow calls keep workers waiting, and Lambda bills the wait.
 * @example estimateAcrossLatencies(plan, ctx).map((s) => s.share) // [0.008, 0.014, 0.027]
 */
export function estimateAcrossLatencies(
  plan: Plan,
  ctx: CostContext,
  assumptions: Partial<AwsCostAssumptions> = {},
  prices: AwsPrices = loadAwsPrices(),
): LatencyScenario[] {
  return LATENCY_SCENARIOS.map((callSeconds) => {
    const est = estimateAwsCost(plan, ctx, { ...assumptions, callSeconds }, prices);
    return { callSeconds, totalUsd: est.totalUsd, share: est.share };
  });
}

function quantity(n: number, unit: string): string {
  if (unit === 'GB-months') return `${n < 10 ? n.toFixed(3) : Math.round(n).toLocaleString('en-US')} GB-month${n === 1 ? '' : 's'}`;
  if (unit === 'bytes') {
    const units = ['B', 'KB', 'MB', 'GB', 'TB'];
    let v = n;
    let i = 0;
    while (v >= 1000 && i < units.length - 1) {
      v /= 1000;
      i++;
    }
    return `${v.toFixed(v < 10 && i > 0 ? 1 : 0)} ${units[i]!}`;
  }
  return `${Math.round(n).toLocaleString('en-US')} ${unit}`;
}

/** The share of the model cost as words. */
function shareText(share: number): string {
  return Number.isFinite(share) ? `${(share * 100).toFixed(2)} % of the model cost` : 'the models cost nothing';
}

/**
 * The estimate as a table, one row per service and stage, then the total beside the model cost, the
 * assumptions it rests on and, given `latencies`, the total at other call latencies.
 */
export function formatAwsCost(est: AwsCostEstimate, latencies: readonly LatencyScenario[] = []): string {
  const usd = (x: number): string => `$${x.toFixed(x < 1 ? 4 : 2)}`;
  const groups = new Map<string, { service: AwsService; stage: string; units: Map<string, number>; usd: number }>();
  for (const l of est.lines) {
    const key = `${l.service}|${l.stage}`;
    const g = groups.get(key) ?? { service: l.service, stage: l.stage, units: new Map<string, number>(), usd: 0 };
    g.units.set(l.unit, (g.units.get(l.unit) ?? 0) + l.quantity);
    g.usd += l.usd;
    groups.set(key, g);
  }
  const rows = [
    ['service', 'stage', 'quantity', 'AWS cost'],
    ...[...groups.values()].map((g) => [g.service, g.stage, [...g.units].map(([unit, n]) => quantity(n, unit)).join(' + '), usd(g.usd)]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const table = rows.map((r) => r.map((cell, c) => (c === 3 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ')).join('\n');
  const a = est.assumptions;
  const out = [
    table,
    `AWS total: ${usd(est.totalUsd)} beside ${usd(est.modelUsd)} of model calls (${shareText(est.share)})`,
    `assumed: a call keeps its slot ${a.callSeconds} s; ${a.invocationOverheadSeconds} s of each worker invocation outside calls; ` +
      `${a.parquetBytesPerReply} bytes of Parquet per reply, stored ${a.storageMonths} month${a.storageMonths === 1 ? '' : 's'}; ` +
      `X-Ray: one trace per invocation; no NAT gateway (the Lambda functions run outside a VPC; a GPU campaign's NAT is in its GPU lines)`,
    `prices: ${est.prices.region}, version ${est.prices.version}${est.prices.verified ? '' : ' (unverified: typed in offline; check the AWS pricing pages)'}`,
  ];
  if (latencies.length > 0) {
    out.push(
      `if calls are slower (Lambda bills the wait): ${latencies.map((l) => `${l.callSeconds} s → ${usd(l.totalUsd)} (${shareText(l.share).replace(' of the model cost', '')})`).join('; ')}`,
    );
  }
  if (est.cutoffExceeded) {
    out.push(
      `warning: an analysis query may scan ${quantity(est.athenaBytesPerQuery, 'bytes')}, past the workgroup's cutoff of ${quantity(DEFAULT_BYTES_SCANNED_CUTOFF, 'bytes')}: deploy with a larger bytesScannedCutoff`,
    );
  }
  return out.join('\n');
}
