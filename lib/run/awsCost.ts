/**
 * What the AWS machinery costs around the model calls (issue 4, "Cost of the machinery"): Lambda
 * GB-seconds and requests, Step Functions state transitions, S3 requests, DynamoDB request units,
 * Athena bytes scanned and CloudWatch Logs ingestion, for one execution of a planned campaign.
 * Pure arithmetic over the plan, the campaign, the stack's sizing (lib/config/sizing.ts) and the
 * shard rules the plan handler uses (lib/run/shards.ts); prices come from awsPrices.json.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { FAR6_SQL } from '../batteries/far6/sqlLibrary.js';
import { DEFAULT_BYTES_SCANNED_CUTOFF } from '../config/index.js';
import { FUNCTION_SIZING, SHARDS_PER_BATCH } from '../config/sizing.js';
import type { FunctionSizing } from '../config/sizing.js';
import type { Campaign, ModelEntry } from '../design/campaign.js';
import { CampaignFileError, formatIssues } from '../errors.js';
import type { Plan } from './planCampaign.js';
import { callsPerCopy, phaseCopies, pollSeconds, shardItems, slices } from './shards.js';
import type { Phase } from './shards.js';

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
  s3: z.object({ per_thousand_put_copy_post_list: rate, per_thousand_get: rate }),
  dynamodb: z.object({ per_million_write_request_units: rate, per_million_read_request_units: rate }),
  athena: z.object({ per_terabyte_scanned: rate, minimum_megabytes_per_query: rate }),
  cloudwatch_logs: z.object({ per_gb_ingested: rate }),
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
};

export type AwsService = 'Lambda' | 'Step Functions' | 'S3' | 'DynamoDB' | 'Athena' | 'CloudWatch Logs';

export interface AwsCostLine {
  readonly service: AwsService;
  /** `plan`, `generate`, `judge`, `analysis`. */
  readonly stage: string;
  readonly quantity: number;
  /** What `quantity` counts: `GB-s`, `requests`, `transitions`, `PUT`, `GET`, `WRU`, `RRU`, `bytes`. */
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
  readonly stages: readonly { readonly stage: Phase; readonly shards: number; readonly invocations: number; readonly copies: number; readonly callsPerCopy: number }[];
  /** Athena bytes one analysis query may scan, and whether the workgroup cutoff would cancel it. */
  readonly athenaBytesPerQuery: number;
  readonly cutoffExceeded: boolean;
}

interface PhaseWork {
  readonly phase: Phase;
  readonly items: number;
  readonly shards: number;
  readonly invocations: number;
  readonly workerSeconds: number;
  readonly copies: number;
  readonly callsPerCopy: number;
}

/** Items, shards, invocations and worker seconds of one phase, cut as the plan handler cuts it. */
function phaseWork(plan: Plan, campaign: Campaign, phase: Phase, a: AwsCostAssumptions): PhaseWork {
  const copies = phaseCopies(campaign, phase);
  const inFlight = callsPerCopy(campaign, phase);
  const usableSeconds = FUNCTION_SIZING.worker.timeoutSeconds - 60; // the worker stops ~60 s before its timeout
  const byId = new Map<string, ModelEntry>(campaign.models.map((m) => [m.id, m]));
  let items = 0;
  let shards = 0;
  let invocations = 0;
  let workerSeconds = 0;
  // Shards of one model (generate) or of the judge over one judged model: cut per partition.
  const groups = new Map<ModelEntry, { items: number; shards: number }>();
  for (const p of plan.partitions) {
    const entry = phase === 'generate' ? byId.get(p.model) : campaign.judge;
    const calls = phase === 'generate' ? p.items : p.judged;
    if (!entry || calls === 0) continue;
    const size = entry.mode === 'batch' ? p.items : shardItems(entry, copies);
    const g = groups.get(entry) ?? { items: 0, shards: 0 };
    g.items += calls;
    g.shards += slices(p.items, size).length;
    groups.set(entry, g);
  }
  for (const [entry, g] of groups) {
    items += g.items;
    shards += g.shards;
    const batches = Math.ceil(g.shards / SHARDS_PER_BATCH);
    if (entry.mode === 'batch') {
      // Submit, then one short invocation per poll until the provider batch is done.
      const polls = Math.ceil((a.batchHours * 3600) / pollSeconds(campaign, phase));
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
  return { phase, items, shards, invocations, workerSeconds, copies, callsPerCopy: inFlight };
}

const gbSeconds = (seconds: number, sizing: FunctionSizing): number => (seconds * sizing.memoryMb) / 1024;

/**
 * The AWS cost of one execution of `plan` on the deployed stack, beside the model cost.
 * @example
 * const est = estimateAwsCost(planCampaign(ctx.campaign, ctx.battery), ctx.campaign);
 * console.log(formatAwsCost(est)); // … AWS 1.1 % of the model cost
 */
export function estimateAwsCost(
  plan: Plan,
  campaign: Campaign,
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
  };

  const generateItems = plan.partitions.reduce((s, p) => s + p.items, 0);
  const modelLanguages = plan.partitions.length;

  // plan: expand, write prompts (one part per partition), register every generate item.
  // The plan stops registering before its timeout (functions/plan PLAN_RESERVE_MS) and leaves the
  // rest to the workers: the same write units, at most the plan's timeout of Lambda time.
  lambda('plan', Math.min(FUNCTION_SIZING.plan.timeoutSeconds, generateItems / a.planWritesPerSecond + a.invocationOverheadSeconds), 1, FUNCTION_SIZING.plan);
  lambdaLogs('plan', 1);
  s3('plan', 2 * modelLanguages + 5, 4 + 1); // prompt parts and registered markers, plan.json, two manifests, two marker lists; campaign input files
  // Parent execution: Plan, the two Maps, Athena, Report, Done (and the Choice with GPU).
  transitions('plan', 7);

  const stages: PhaseWork[] = [];
  for (const phase of ['generate', 'judge'] as const) {
    const w = phaseWork(plan, campaign, phase, a);
    if (w.items === 0) continue;
    stages.push(w);
    lambda(phase, w.workerSeconds, w.invocations, FUNCTION_SIZING.worker);
    lambdaLogs(phase, w.invocations);
    // Each child runs Invoke → Choice and ends in Succeed; every `again` adds Wait → Invoke → Choice.
    transitions(phase, 3 * w.invocations);
    // Per invocation: the campaign input (3 files), and for the judge the partition's reply parts
    // (~1 per shard of the model); per shard: a replies part and a readings part, plus the done marker
    // for judge shards; the Map reads its manifest and writes its result files. Journals stay in the
    // worker's /tmp (committed as parts before it returns), so they cost no S3 request.
    // A generate shard also asks whether its partition is registered (one HEAD, priced as a GET).
    const gets = 3 * w.invocations + w.shards + 1;
    const puts = 2 * w.shards + (phase === 'judge' ? w.shards : 0) + 2 + Math.ceil(w.invocations / 1000);
    s3(phase, puts, gets);
    // Per item: the units in writeUnitsPerItem/readUnitsPerItem; per chunk: the reservation
    // (a transaction of two items: 4 units) and its settlement in the part's transaction (2 units
    // per deleted reservation); per shard: the part record, the budget update and the mark (5 units).
    const chunks = Math.ceil(w.items / a.itemsPerChunk) + w.shards;
    dynamo(phase, w.items * a.writeUnitsPerItem + chunks * 6 + w.shards * 5, w.items * a.readUnitsPerItem);
  }

  // analysis: the state machine's query, reused by the report; the report runs every other SQL file
  // over at most all three tables' Parquet (Athena reads fewer columns; this is the ceiling).
  const replies = plan.lines.filter((l) => l.phase === 'generate').reduce((s, l) => s + l.items, 0);
  const athenaBytesPerQuery = replies * a.parquetBytesPerReply;
  const billedPerQuery = Math.max(athenaBytesPerQuery, prices.athena.minimum_megabytes_per_query * 1e6);
  const queries = FAR6_SQL.allQueries().length;
  add('Athena', 'analysis', queries * billedPerQuery, 'bytes', ((queries * billedPerQuery) / 1e12) * prices.athena.per_terabyte_scanned);
  // Each query reads every part file's footer and row groups (~3 GETs a file) and writes its result.
  const partFiles = modelLanguages * 3 + stages.reduce((s, w) => s + 2 * w.shards, 0);
  s3('analysis', queries + 6, queries * partFiles * 3);
  lambda('analysis', 60 + queries * 5, 1, FUNCTION_SIZING.report);
  lambdaLogs('analysis', 1);

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
  };
}

function quantity(n: number, unit: string): string {
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

/** The estimate as a table, one row per service and stage, then the total beside the model cost. */
export function formatAwsCost(est: AwsCostEstimate): string {
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
  const share = Number.isFinite(est.share) ? `${(est.share * 100).toFixed(2)} % of the model cost` : 'the models cost nothing';
  const out = [
    table,
    `AWS total: ${usd(est.totalUsd)} beside ${usd(est.modelUsd)} of model calls (${share})`,
    `prices: ${est.prices.region}, version ${est.prices.version}${est.prices.verified ? '' : ' (unverified: typed in offline; check the AWS pricing pages)'}`,
  ];
  if (est.cutoffExceeded) {
    out.push(
      `warning: an analysis query may scan ${quantity(est.athenaBytesPerQuery, 'bytes')}, past the workgroup's cutoff of ${quantity(DEFAULT_BYTES_SCANNED_CUTOFF, 'bytes')}: deploy with a larger bytesScannedCutoff`,
    );
  }
  return out.join('\n');
}
