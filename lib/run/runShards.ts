/**
 * The AWS pipeline's worker: runs the shards of one ItemBatcher batch, of any phase of
 * the battery's graph, through the same runners as the local run (runPartition, or
 * runBatchPartition for `mode: batch`), with a blob store and a ledger it is given (S3 and DynamoDB
 * on AWS). Journals live in a scratch folder that does not outlive the invocation, so the worker
 * stops `safetyMs` before its deadline and commits every journaled reply before it returns; what
 * is left pending comes back with `again`, and the state machine invokes it again after a Wait. A
 * shard whose runner throws (a provider bug, an S3 or DynamoDB error) has its journals committed and
 * its reservations handed back before the error propagates (salvage), so what was paid for is
 * neither lost nor asked again by the retry.
 *
 * Idempotency is the ledger's: an item is asked only while the ledger has it pending, and a part's
 * commit marks its items done, settles its reservations and adds its cost in one transaction. A
 * re-delivered or re-invoked batch finds its items done and asks nothing twice, even when the first
 * invocation died half-way.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { PhaseSpec, Upstream } from '../battery/types.js';
import type { Shard, WorkerEvent, WorkerOutput } from '../config/pipeline.js';
import type { PromptItem } from '../core/types.js';
import type { ModelEntry } from '../design/campaign.js';
import type { BatchClient } from '../providers/batchTypes.js';
import type { ProviderContext } from '../providers/entry.js';
import { createBatchClient, createProvider } from '../providers/registry.js';
import type { Ledger } from '../store/types.js';
import { DEFAULT_RETRY } from './callWithRetry.js';
import { answererOf, priceIn } from './context.js';
import type { RunContext } from './context.js';
import { partitionSpec, rateLimited } from './partitionSpec.js';
import { ensurePrompts } from './promptsPart.js';
import type { SharedPartitionFields } from './partitionSpec.js';
import { PartitionItems } from './partitionItems.js';
import type { ParquetSession } from './parquetIo.js';
import { DEFAULT_PART_ROWS } from './partitionTypes.js';
import type { PartitionOutcome } from './partitionTypes.js';
import { RateLimiters } from './RateLimiter.js';
import { readingRows } from './readings.js';
import { restoreOrphanParts } from './restoreOrphanParts.js';
import { runBatchPartition } from './runBatchPartition.js';
import { runPartition } from './runPartition.js';
import { ShardNotSalvagedError, salvage } from './salvageShard.js';
import type { ShardRunnerDeps } from './shardRunnerDeps.js';
import { checkShard, markSettled, pendingOfShard, registered, sliceOf } from './shardItems.js';
import { ShardWork } from './ShardWork.js';
import { callsPerCopy, copyLimits, waveCopies } from './shards.js';
import { shardUpstream } from './shardUpstream.js';
import type { StopState } from './stopState.js';
import { shardRunId } from './upstreamSlice.js';
import { holdLease } from './workerLease.js';

/** StopState.overruns that reports each excess as it is added (noteOverrun, stopState.ts, adds it with `set`). */
class OverrunsMap extends Map<string, number> {
  constructor(private readonly onExcess: (model: string, excessUsd: number) => void) {
    super();
  }

  override set(model: string, totalUsd: number): this {
    const excess = totalUsd - (this.get(model) ?? 0);
    super.set(model, totalUsd);
    if (excess > 0) this.onExcess(model, excess);
    return this;
  }
}

/**
 * The stops only the user can lift (a new key; waiting out the provider's Retry-After): logged and
 * recorded once each for `sondage status --aws`, under these words.
 */
interface UserStop {
  readonly logLine: string;
  readonly error: string;
}
const KEY_REJECTED: UserStop = { logLine: 'provider rejected the API key', error: 'ProviderKeyRejected' };
const WAIT_TOO_LONG: UserStop = { logLine: 'provider asked for a longer wait than a worker waits', error: 'ProviderWaitTooLong' };

/** Counts of one invocation. */
interface Totals {
  done: number;
  failed: number;
  pending: number;
  openBatches: number;
  costUsd: number;
  keyBlocked: number;
  waitBlocked: number;
}

/** What every shard of one invocation shares. */
interface Invocation {
  readonly ctx: RunContext;
  readonly deps: ShardRunnerDeps;
  readonly execution: string;
  readonly io: ParquetSession;
  /** The invocation's ledger, counted (ShardWork): a failed shard knows what it still holds. */
  readonly ledger: Ledger;
  readonly inflight: ShardWork;
  readonly limiters: RateLimiters;
  readonly providerCtx: ProviderContext;
  /** Copies of the worker that may call the same model at once (their shares of the limits). */
  readonly copies: number;
  readonly shared: Omit<SharedPartitionFields, 'runId'>;
}

/**
 * Runs the shards of one invocation. Each shard's partition is expanded again (deterministic); a
 * dependent phase's items are built from the stored outputs of the phases it consumes, copied
 * from the store into the scratch folder.
 */
export async function runShards(ctx: RunContext, e: WorkerEvent, deps: ShardRunnerDeps): Promise<WorkerOutput> {
  const { campaign, battery, graph } = ctx;
  const { execution } = e.BatchInput;
  const { store, log } = deps;
  const retryFailed = e.BatchInput.retryFailed === true;
  const inflight = new ShardWork();
  const ledger = inflight.ledger(deps.ledger);
  const io = await deps.parquet.session(join(deps.scratch, 'parquet'));
  // Each copy takes its share of the rate limits: every copy of the wave may call the same model.
  const phasesHere = graph.phases.filter((p) => e.Items.some((s) => s.phase === p.name));
  const copies = e.BatchInput.copies ?? waveCopies(ctx, phasesHere);
  const limiters = new RateLimiters();
  const providerCtx = { seed: campaign.seed, file: campaign.file, onRateLimitHints: limiters.observe, ...(battery.simulator ? { simulator: battery.simulator } : {}) };
  const { stop, flagged } = workerStop(ctx, deps);
  const shared = sharedFields({ ctx, deps, inflight, ledger, copies, stop, retryFailed });
  const inv: Invocation = { ctx, deps, execution, io, ledger, inflight, limiters, providerCtx, copies, shared };
  const total: Totals = { done: 0, failed: 0, pending: 0, openBatches: 0, costUsd: 0, keyBlocked: 0, waitBlocked: 0 };
  // Messages of rejected keys and too long waits already recorded by this invocation (one record per provider).
  const recorded = new Set<string>();
  const recordUserStop = async (stopMessage: string, kind: UserStop, phase: string, model: string): Promise<void> => {
    if (recorded.has(stopMessage)) return;
    recorded.add(stopMessage);
    const message = deps.redact(stopMessage);
    log.error(kind.logLine, { campaign: campaign.name, phase, execution, model, detail: message });
    await deps.recordFailure({ campaign: campaign.name, execution, at: new Date().toISOString(), error: kind.error, cause: `${phase}: ${message}` });
  };
  // Held while this invocation may reserve: a plan that moves the fence waits for it to end.
  const lease = await holdLease(deps.ledger, campaign.name, deps.invocation, deps.leaseMs, (err) => log.warn('worker lease not renewed', { campaign: campaign.name, error: deps.redact(String(err)) }));
  try {
    // Checked after the lease is written, as a plan writes the fence before it reads the leases:
    // either that plan waits for this lease, or this worker sees the plan's fence. A fenced worker
    // of a stopped execution's later wave registers nothing (two registrations of one item at once
    // would count it twice) and asks nothing; its reservations would be refused as over budget.
    const fencedBy = await deps.ledger.fencedOutBy?.(campaign.name);
    if (fencedBy !== undefined) {
      stop.reason = 'budget';
      log.warn('the campaign\'s fence names another run: this worker asks nothing', { campaign: campaign.name, execution, fence: fencedBy });
    }
    for (const shard of e.Items) {
      const { phase, model } = checkShard(ctx, shard);
      if (stop.reason) {
        // Not started: every item of the shard still to do.
        total.pending += await pendingOfShard(ctx, ledger, phase, model, shard, retryFailed);
        continue;
      }
      const ready = await prepareShard(inv, phase, model, shard);
      const out = await runPrepared(inv, phase, model, shard, ready);
      const open = ready.batch ? (await ledger.openBatches(campaign.name, phase.name, shard.model, shard.language)).length : 0;
      total.done += out.done + out.adopted;
      total.failed += out.failed;
      total.pending += out.pending;
      total.openBatches += open;
      total.costUsd += out.costUsd;
      if (out.syncRemainder !== undefined) {
        // Charged at the on-demand price, not the batch price the plan assumed for the rest.
        log.info('items asked synchronously at the on-demand price: fewer than a batch job must hold', {
          campaign: campaign.name,
          phase: phase.name,
          model: shard.model,
          language: shard.language,
          items: out.syncRemainder.items,
          minRequests: out.syncRemainder.minRequests,
        });
      }
      if (out.keyFailure !== undefined) {
        // Not in `pending`: another invocation cannot help until the key is fixed, so these items
        // do not make the Map loop; they stay pending in the ledger for the next execution.
        total.keyBlocked += out.keyBlocked ?? 0;
        await recordUserStop(out.keyFailure, KEY_REJECTED, phase.name, shard.model);
      }
      if (out.waitStop !== undefined) {
        // Like a rejected key: not in `pending`, since invoking again before the provider's time meets the same wait.
        total.waitBlocked += out.waitBlocked ?? 0;
        await recordUserStop(out.waitStop, WAIT_TOO_LONG, phase.name, shard.model);
      }
      if (phase.after.length > 0 && out.pending === 0 && open === 0) await markSettled(ctx, ledger, store, phase, shard, ready.partition, ready.items);
    }
  } finally {
    await Promise.all(flagged);
    await lease.end();
    await io.close();
    await rm(deps.scratch, { recursive: true, force: true });
  }
  // A call that cost more than it reserved stops this invocation as the cap does (no Wait loop),
  // and, through the ledger's flag, every other worker of the campaign at its next chunk.
  if (stop.overruns && stop.overruns.size > 0) for (const [model, usd] of stop.overruns) log.error('provider reported usage above the reservation', { campaign: campaign.name, execution, model, excessUsd: usd });
  const stopped = stop.reason === 'budget' || stop.reason === 'overrun' ? 'budget' : undefined;
  const { keyBlocked, waitBlocked, ...counts } = total;
  return {
    ...counts,
    ...(keyBlocked > 0 ? { keyBlocked } : {}),
    ...(waitBlocked > 0 ? { waitBlocked } : {}),
    ...(stopped ? { stopped } : {}),
    // Out of budget, pending items wait for a larger cap and a re-started execution, not a Wait loop.
    again: total.openBatches > 0 || (total.pending > 0 && !stopped),
  };
}

/** The invocation's stop flag; an overrun seen here stops every worker of the campaign: the ledger's flag moves its fence. */
function workerStop(ctx: RunContext, deps: ShardRunnerDeps): { stop: StopState; flagged: Promise<void>[] } {
  const { campaign } = ctx;
  const flagged: Promise<void>[] = [];
  const stop: StopState = {
    // A Retry-After above the ceiling stops that model's calls; the failure recorded says how to resume.
    resumeWith: '`sondage start --aws` again',
    overruns: new OverrunsMap((model, excessUsd) => {
      if (!deps.ledger.flagOverrun) return;
      flagged.push(deps.ledger.flagOverrun(campaign.name, model, excessUsd).catch((err: unknown) => deps.log.error('overrun flag not written', { campaign: campaign.name, model, error: deps.redact(String(err)) })));
    }),
  };
  return { stop, flagged };
}

/** The fields the shards of one invocation share: the counted ledger, the deadline, the invocation's share of the concurrency. */
function sharedFields(o: {
  readonly ctx: RunContext;
  readonly deps: ShardRunnerDeps;
  readonly inflight: ShardWork;
  readonly ledger: Ledger;
  readonly copies: number;
  readonly stop: StopState;
  readonly retryFailed: boolean;
}): Omit<SharedPartitionFields, 'runId'> {
  const { ctx, deps, inflight } = o;
  return {
    campaign: ctx.campaign.name,
    // Waits past the campaign's ceiling (aws.max_wait_seconds) are not sat out: a worker has minutes, a Retry-After may say a day.
    retry: { ...DEFAULT_RETRY, maxWaitMs: ctx.campaign.aws.max_wait_seconds * 1000 },
    ledger: o.ledger,
    semaphore: inflight.semaphore(deps.inFlight ?? callsPerCopy(ctx.campaign, o.copies)),
    chunkSize: deps.chunkSize ?? 64,
    partRows: deps.partRows ?? DEFAULT_PART_ROWS,
    ...(deps.partMs !== undefined ? { partMs: deps.partMs } : {}),
    signal: deps.deadline.signal,
    onReply: () => deps.deadline.check(),
    onUnanswered: (journalPath, reservedUsd) => inflight.noteUnanswered(journalPath, reservedUsd),
    ...(deps.deadline.leftMs ? { mayStartCall: startsBefore(deps.deadline.leftMs, ctx.campaign.aws.min_call_seconds * 1000) } : {}),
    stop: o.stop,
    // Items failed permanently are asked again (`sondage start --aws --retry-failed`).
    ...(o.retryFailed ? { retryFailed: true } : {}),
  };
}

/**
 * Whether a call may start with `leftMs()` to the deadline: while its attempt timeout is left, or
 * the campaign's call window (`aws.min_call_seconds`) where that is shorter. A call that the
 * deadline still cuts is aborted, counted possibly billed at its reservation, and its item asked
 * again by the next invocation under a reservation of its own: the attempt ends at the earlier of
 * its timeout and the deadline.
 */
export function startsBefore(leftMs: () => number, windowMs: number): (attemptTimeoutMs: number) => boolean {
  return (attemptTimeoutMs) => leftMs() > Math.min(attemptTimeoutMs, windowMs);
}

/** A shard ready to run: its items, its provider (or batch client) and its partition spec. */
interface PreparedShard {
  readonly partition: PartitionItems;
  readonly items: readonly PromptItem[];
  readonly spec: ReturnType<typeof partitionSpec<readonly PromptItem[]>>;
  readonly batch: BatchClient | undefined;
}

/**
 * Expands a shard's items (a dependent phase's from the stored outputs of the phases it consumes,
 * its prompts part rewritten) and builds its provider and its partition spec.
 */
async function prepareShard(inv: Invocation, phase: PhaseSpec, model: ModelEntry, shard: Shard): Promise<PreparedShard> {
  const { ctx, deps, io } = inv;
  const { campaign, battery, graph } = ctx;
  const { store, log } = deps;
  const dependent = phase.after.length > 0;
  const entry = answererOf(ctx, phase, model);
  let upstream: Upstream | undefined;
  if (dependent) {
    const read = await shardUpstream(ctx, store, io, join(deps.scratch, 'inputs', `${shard.start}-${shard.end}`), phase, model, shard);
    log.info('upstream read', { campaign: campaign.name, phase: phase.name, model: shard.model, language: shard.language, start: shard.start, end: shard.end, parts: read.parts, partsListed: read.partsListed, bytes: read.bytes, sliceItems: read.sliceItems });
    upstream = read.upstream;
  }
  const partition = new PartitionItems({ ctx, model, language: shard.language, upstream, slice: sliceOf(phase, shard) });
  const items = partition.items(phase.name);
  if (dependent) {
    // A dependent phase's prompts depend on the stored replies: rewritten whenever they differ
    // (a later invocation may read replies an earlier one did not have).
    await ensurePrompts(
      io.writer,
      store,
      { campaign: campaign.name, phase: phase.name, model: shard.model, language: shard.language, partName: `part-plan-${shard.start}-${shard.end}.parquet` },
      items,
      battery.prompts,
    );
  }
  const provider = rateLimited(inv.limiters, await createProvider({ ...entry, role: phase.answeredBy === 'subject' ? 'subject' : phase.answeredBy.role }, inv.providerCtx), copyLimits(entry, inv.copies));
  const batch = shard.mode === 'batch' ? await createBatchClient(entry, inv.providerCtx) : undefined;
  const folder = graph.readingsFolder(phase);
  const spec = partitionSpec(
    { ...inv.shared, runId: shardRunId(deps.invocation, shard) },
    {
      phase: phase.name,
      readingsFolder: folder,
      model: shard.model,
      language: shard.language,
      items,
      provider,
      price: priceIn(ctx, phase, entry),
      batch,
      readReply: (item, reply) => readingRows(phase, folder, battery.vocabulary, item, reply),
      // Counted, so that a failed shard can wait for its part commits to end before it adopts.
      store: inv.inflight.counted(store),
      writer: inv.inflight.counted(io.writer),
      // One folder per shard: two shards of a partition in one container must not adopt each other's journals.
      journalDir: join(deps.scratch, 'journal', phase.name, `model=${shard.model}`, `language=${shard.language}`, `shard=${shard.start}-${shard.end}`),
      // Named in the message when the provider rejects the key (the variable, never the key).
      keyEnv: entry.api_key_env,
      timeoutS: entry.timeout_s,
    },
  );
  return { partition, items, spec, batch };
}

/**
 * Runs a prepared shard through runPartition (runBatchPartition for `mode: batch`), after the parts
 * an earlier execution left uncommitted are turned back into journals. A runner that throws is
 * salvaged first (salvageShard.ts); its error propagates either way.
 */
async function runPrepared(inv: Invocation, phase: PhaseSpec, model: ModelEntry, shard: Shard, ready: PreparedShard): Promise<PartitionOutcome> {
  const { ctx, deps, inflight } = inv;
  const { spec, batch } = ready;
  inflight.reset(phase.after.length === 0 && (await registered(ctx, deps.store, phase, model, shard)));
  if (!batch) {
    await restoreOrphanParts({ store: deps.store, ledger: inv.ledger, partToJournal: inv.io.partToJournal, campaign: ctx.campaign.name, execution: inv.execution, shard, journalDir: spec.journalDir, scratch: join(deps.scratch, 'orphans') });
  }
  try {
    return batch ? await runBatchPartition({ ...spec, batch, pollMs: 0, once: true }) : await runPartition(spec);
  } catch (err) {
    if (await salvage(err, { spec, batch: batch !== undefined, inflight, deps })) throw err;
    // What it journaled is lost or its reservations still held: invoking the batch again at
    // once could ask and hold twice; the give-up step and the next execution settle it.
    throw new ShardNotSalvagedError(`${shard.phase} ${shard.model}/${shard.language} [${shard.start}, ${shard.end}): ${deps.redact(String(err))}; its journal could not be committed, so the batch is not invoked again in this execution`, { cause: err });
  }
}
