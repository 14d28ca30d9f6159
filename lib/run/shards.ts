/**
 * How a campaign phase is cut into shards for the state machine's Distributed Map, and
 * how many worker copies run it. Pure functions of the campaign: the plan handler cuts the
 * manifest with them, and the worker recomputes its share of the rate limit with the same ones.
 */
import { FUNCTION_SIZING, GPU_JOB, SHARDS_PER_BATCH } from '../config/sizing.js';
import type { FunctionSizing } from '../config/sizing.js';
import { packInOrder } from '../core/packInOrder.js';
import { SondageError } from '../errors.js';
import { createHash } from 'node:crypto';
import type { PhaseSpec } from '../battery/types.js';
import type { Campaign, ModelEntry } from '../design/campaign.js';
import { promptsPerSecond } from '../gpu/settings.js';
import { phaseEntries, settingsIn } from './context.js';
import type { RunContext } from './context.js';

/**
 * Ceiling on concurrent worker copies: the worker's reserved concurrency, read from
 * lib/config/sizing.ts (the one number the stack deploys), never a copy of it. Without one the
 * copies would draw on the account's shared pool and the plan could not bound them.
 */
export const MAX_WORKER_COPIES: number = workerReservedConcurrency(FUNCTION_SIZING.worker);

/**
 * Worker copies when the stack reserves no concurrency for the worker (`-c sondage:workerConcurrency=0`,
 * for accounts whose quota leaves nothing to reserve): few enough to share the account's pool.
 */
export const UNRESERVED_WORKER_COPIES = 5;

/**
 * The ceiling on worker copies for a deployed reserved concurrency (ENV.workerCopies): that
 * number, or UNRESERVED_WORKER_COPIES for 0 (none reserved); MAX_WORKER_COPIES when unset.
 */
export function workerCopiesCeiling(reserved: string | undefined): number {
  if (reserved === undefined || reserved === '') return MAX_WORKER_COPIES;
  const n = Number(reserved);
  if (!Number.isInteger(n) || n < 0) throw new SondageError(`the worker's reserved concurrency must be a whole number ≥ 0 (0: none reserved), got ${JSON.stringify(reserved)}`);
  return n === 0 ? UNRESERVED_WORKER_COPIES : n;
}

/** The worker's reserved concurrency; a sizing without one is refused (see MAX_WORKER_COPIES). */
export function workerReservedConcurrency(worker: FunctionSizing): number {
  const n = worker.reservedConcurrency;
  if (n === undefined || !Number.isInteger(n) || n < 1) {
    throw new SondageError(`lib/config/sizing.ts: FUNCTION_SIZING.worker.reservedConcurrency must be a positive integer (the ceiling on worker copies), got ${String(n)}`);
  }
  return n;
}
/**
 * Calls one worker copy keeps in flight; the campaign's `concurrency` is spread over copies of this
 * size. Lambda bills a copy's wall time, which is mostly waiting on the provider, so the more calls
 * share it the less each costs: at 16, a 6 s call cost 0.43 GB-s of worker time; at 64, 0.11
 * (bench/worker-latency.ts, the real handler against a provider that holds each reply 6 s). A
 * waiting call costs the worker little: ~15 ms of CPU a call and ~230 MB of RSS, within the
 * 1,024 MB and 0.58 vCPU the worker is deployed with.
 */
export const CALLS_PER_COPY = 64;
/**
 * A copy gets at least this many requests per minute of a model's RPM: more copies than
 * rpm / this would each wait most of its time in the rate limiter, paying Lambda time for nothing.
 */
export const MIN_COPY_RPM = 30;
/**
 * Minutes of calls one shard is sized for at its copy's share of the RPM: the worker's timeout less
 * the minute it keeps to commit, over the shards one invocation gets (ItemBatcher). A shard cut
 * short returns `again` and the next invocation finishes it, so this is a target, not a bound the
 * run depends on.
 */
export const SHARD_MINUTES = Math.max(1, Math.floor((FUNCTION_SIZING.worker.timeoutSeconds / 60 - 1) / SHARDS_PER_BATCH));
/** Shard size of models without an RPM (simulated, or unlimited): bounded by the worker's memory and time. */
export const UNLIMITED_SHARD_ITEMS = 2000;
/** Smallest shard: below this the per-invocation overhead (download, DuckDB, manifest line) dominates. */
export const MIN_SHARD_ITEMS = 20;

/**
 * Worker copies for the phases of a wave (the Map's maxConcurrency): enough to keep the campaign's
 * `concurrency` calls in flight, at most `maxCopies` (the worker's reserved concurrency as deployed,
 * MAX_WORKER_COPIES by default), and no more than the slowest model
 * answering any of the phases can feed (MIN_COPY_RPM each of its RPM).
 */
export function waveCopies(ctx: Pick<RunContext, 'campaign'>, phases: readonly PhaseSpec[], maxCopies: number = MAX_WORKER_COPIES): number {
  let copies = Math.min(maxCopies, Math.ceil(ctx.campaign.concurrency / CALLS_PER_COPY));
  for (const phase of phases) {
    for (const m of phaseEntries(ctx, phase)) {
      if (m.rpm !== undefined) copies = Math.min(copies, Math.floor(m.rpm / MIN_COPY_RPM));
    }
  }
  return Math.max(1, copies);
}

/** Calls one copy keeps in flight: the campaign's concurrency spread over the wave's copies. */
export function callsPerCopy(campaign: Pick<Campaign, 'concurrency'>, copies: number): number {
  return Math.max(1, Math.ceil(campaign.concurrency / copies));
}

/**
 * One copy's share of a model's RPM/TPM: every copy may be calling the same model at once, so
 * each gets the limit divided by the phase's copies (never above what the provider allows).
 */
export function copyLimits(entry: Pick<ModelEntry, 'rpm' | 'tpm'>, copies: number): { rpm?: number; tpm?: number } {
  return {
    ...(entry.rpm !== undefined ? { rpm: Math.max(1, Math.floor(entry.rpm / copies)) } : {}),
    ...(entry.tpm !== undefined ? { tpm: Math.max(1, Math.floor(entry.tpm / copies)) } : {}),
  };
}

/** Items per shard for a model: SHARD_MINUTES of calls at the copy's share of its RPM. */
export function shardItems(entry: Pick<ModelEntry, 'rpm'>, copies: number): number {
  if (entry.rpm === undefined) return UNLIMITED_SHARD_ITEMS;
  const perCopy = entry.rpm / copies;
  return Math.min(UNLIMITED_SHARD_ITEMS, Math.max(MIN_SHARD_ITEMS, Math.floor(perCopy * SHARD_MINUTES)));
}

/** `[start, end)` slices of `count` items, `size` each (the last may be shorter). */
export function slices(count: number, size: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const step = Math.max(1, Math.floor(size));
  for (let start = 0; start < count; start += step) out.push({ start, end: Math.min(count, start + step) });
  return out;
}

/** Wait between worker invocations of a phase with provider batches: batches take minutes to hours. */
export const BATCH_POLL_SECONDS = 300;
/** Wait before a sync shard cut short by the Lambda's time goes on: only long enough to not spin. */
export const SYNC_POLL_SECONDS = 5;

/** Seconds the state machine waits before invoking a worker of a wave that returned `again`. */
export function pollSeconds(ctx: Pick<RunContext, 'campaign'>, phases: readonly PhaseSpec[]): number {
  return phases.some((p) => phaseEntries(ctx, p).some((m: ModelEntry) => m.mode === 'batch')) ? BATCH_POLL_SECONDS : SYNC_POLL_SECONDS;
}

/**
 * Key of the marker a dependent phase's shard leaves once every source item of its slice is
 * settled and its own items too: its items depend on the chosen replies, so a re-started plan
 * cannot ask the ledger which of its shards are pending without downloading the replies; it looks
 * for this marker. Outside the tables' locations (`campaigns/<c>/<phase>/_shards/…`), so no query reads it.
 * The key names the design it was settled under (lib/run/designDigest.ts): an edit can change the
 * shard's items (a judge's prompt holds the reference answer), so a marker of another design is
 * not one, and the plan lists the shard again.
 */
export function shardDoneKey(campaign: string, phase: string, shard: { readonly model: string; readonly language: string; readonly start: number; readonly end: number }, design: string): string {
  return `campaigns/${campaign}/${phase}/_shards/design=${design}/model=${shard.model}/language=${shard.language}/${shard.start}-${shard.end}.done`;
}

/** A done marker's key without the design it names: the same shard under any design (markers written before keys named one included). */
export function shardOfDoneKey(key: string): string {
  return key.replace(/\/_shards\/design=[^/]+\//, '/_shards/');
}

/**
 * Key of the marker the plan leaves once it has registered every item of a root phase's
 * partition, holding registeredDigest of their ids: a worker whose shard's partition has it, with
 * the digest of the items it expands, skips registration (a second one would cost a DynamoDB read
 * per item for nothing); without it (the plan ran short of time, or the campaign's design changed
 * since) the worker registers its shard's items itself. Outside the tables' locations, as shardDoneKey.
 */
export function registeredKey(campaign: string, phase: string, partition: { readonly model: string; readonly language: string }): string {
  return `campaigns/${campaign}/${phase}/_registered/model=${partition.model}/language=${partition.language}.done`;
}
/** What a registeredKey marker holds: a digest of the partition's item ids, in expansion order. */
export function registeredDigest(itemIds: readonly string[]): string {
  const hash = createHash('sha256');
  for (const id of itemIds) hash.update(id).update('\n');
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Items per shard of a runs_on: gpu model in a phase: GPU_JOB.shardSeconds of prompts at the
 * phase's throughput (lib/gpu promptsPerSecond), within GPU_JOB's bounds. A shard is one array
 * child, which loads the model once: an hour of work keeps that load a small share of its time.
 */
export function gpuShardItems(ctx: Pick<RunContext, 'campaign'>, phase: PhaseSpec, entry: ModelEntry): number {
  if (!entry.gpu) throw new SondageError(`model ${entry.id} does not run on a GPU`);
  const { promptsPerSecond: pps } = promptsPerSecond(entry.gpu, phase.name, settingsIn(ctx, phase, entry).max_tokens);
  return Math.min(GPU_JOB.maxShardItems, Math.max(GPU_JOB.minShardItems, Math.floor(pps * GPU_JOB.shardSeconds)));
}

/**
 * The shards of a GPU job grouped, in order, into array children of at most `capacity` (seconds of
 * work at each shard's phase throughput, `weight`) each; a heavier shard stays alone. Each child
 * loads the model once, so the small slices of many partitions (a language with few items, a short
 * dependent phase) share one start-up instead of paying one each.
 * @example packShards([{ start: 0, end: 6 }, { start: 0, end: 6 }, { start: 6, end: 10 }], (s) => s.end - s.start, 12).length === 2
 */
export function packShards<T>(shards: readonly T[], weight: (shard: T) => number, capacity: number): T[][] {
  return packInOrder(shards, weight, capacity);
}

/** Seconds of GPU work of `items` prompts of a phase for a runs_on: gpu entry (at its phase throughput). */
export function gpuSeconds(ctx: Pick<RunContext, 'campaign'>, phase: PhaseSpec, entry: ModelEntry, items: number): number {
  if (!entry.gpu) throw new SondageError(`model ${entry.id} does not run on a GPU`);
  return items / promptsPerSecond(entry.gpu, phase.name, settingsIn(ctx, phase, entry).max_tokens).promptsPerSecond;
}
