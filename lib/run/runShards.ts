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
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PhaseSpec, Upstream } from '../battery/types.js';
import { executionToken } from '../config/pipeline.js';
import type { Shard, WorkerEvent, WorkerOutput } from '../config/pipeline.js';
import type { PromptItem } from '../core/types.js';
import type { ModelEntry } from '../design/campaign.js';
import { SondageError } from '../errors.js';
import { PartCommittedError } from '../store/errors.js';
import { createBatchClient, createProvider } from '../providers/registry.js';
import { partitionPrefix } from '../store/layout.js';
import { ledgerPartition } from '../store/types.js';
import type { BlobStore, Ledger } from '../store/types.js';
import { DEFAULT_MAX_WAIT_MS, DEFAULT_RETRY } from './callWithRetry.js';
import { answererOf, priceIn } from './context.js';
import type { RunContext } from './context.js';
import { ensurePrompts, partitionSpec, rateLimited } from './partitionSpec.js';
import type { SharedPartitionFields } from './partitionSpec.js';
import { PartitionItems } from './partitionItems.js';
import type { ItemSlice } from './partitionItems.js';
import { RateLimiters } from './RateLimiter.js';
import { readingRows } from './readings.js';
import { runBatchPartition } from './runBatchPartition.js';
import { adoptJournals } from './adoptJournals.js';
import { runPartition } from './runPartition.js';
import type { PartitionOutcome, PartitionSpec } from './partitionTypes.js';
import type { StopState } from './stopState.js';
import { ShardWork } from './ShardWork.js';
import { callsPerCopy, copyLimits, registeredDigest, registeredKey, shardDoneKey, waveCopies } from './shards.js';
import type { ParquetIo, ParquetSession } from './parquetIo.js';
import { shardUpstream } from './shardUpstream.js';
import { shardRunId } from './upstreamSlice.js';
import { holdLease } from './workerLease.js';

/** Where a worker logs (Powertools' Logger on Lambda): a message and its structured fields. */
export interface ShardLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface ShardRunnerDeps {
  readonly store: BlobStore;
  /** The ledger, its reservations carrying the execution as run id. */
  readonly ledger: Ledger;
  /** Scratch folder of this invocation (journals, downloaded parts); removed at the end. */
  readonly scratch: string;
  readonly log: ShardLog;
  /** Records a failure `sondage status --aws` shows (a rejected key). */
  recordFailure(failure: { campaign: string; execution: string; at: string; error: string; cause: string }): Promise<void>;
  /** Redacts provider keys from a message (they are loaded from the secret). */
  redact(message: string): string;
  /** Fires at the deadline (safetyMs before the timeout); `check` is called after every reply. */
  readonly deadline: {
    readonly signal: AbortSignal;
    check(): void;
    abort(): void;
    /** Time left until the deadline fires: a call starts only if its attempt timeout ends before (calls in flight at the deadline are aborted). */
    leftMs?(): number;
  };
  /** Time left in ms (salvage waits at most that long, less a margin). */
  remainingMs(): number;
  /** Unique per invocation: reservation ids and part names carry it. */
  readonly invocation: string;
  readonly chunkSize?: number;
  readonly partRows?: number;
  /** Seal a part this long after it opened, full or not (the GPU job's gpu.commit_minutes). */
  readonly partMs?: number;
  /**
   * How parts are written and read: DuckDB (lib/run/parquetIoDuckDb.ts) where it is at hand, pure
   * JavaScript (parquetIoJs.ts) in the Lambda worker, which ships without DuckDB.
   */
  readonly parquet: ParquetIo;
  /** Length of the invocation's lease on the ledger (workerLease.ts; default LEASE_MS). */
  readonly leaseMs?: number;
  /**
   * Calls kept in flight, over the share of the campaign's `concurrency` a Lambda copy gets: the
   * GPU worker keeps hundreds in flight for its own vLLM's continuous batching (gpu.in_flight).
   */
  readonly inFlight?: number;
}

/** StopState.overruns that reports each excess as it is added (runPartition adds it with `set`). */
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

/** A manifest shard checked against the campaign: its phase, model and language exist. */
function checkShard(ctx: RunContext, shard: Shard): { phase: PhaseSpec; model: ModelEntry } {
  const { campaign } = ctx;
  const languages: readonly string[] = ctx.design.languages;
  if (!languages.includes(shard.language)) {
    throw new SondageError(`worker: shard language ${JSON.stringify(shard.language)} is not one campaign ${campaign.name} runs (${languages.join(', ')})`);
  }
  const model = campaign.models.find((m) => m.id === shard.model);
  if (!model) throw new SondageError(`worker: shard names model ${JSON.stringify(shard.model)}, which campaign ${campaign.name} does not have (models: ${campaign.models.map((m) => m.id).join(', ')})`);
  const phase = ctx.graph.phases.find((p) => p.name === shard.phase);
  if (!phase) throw new SondageError(`worker: shard names phase ${JSON.stringify(shard.phase)}, which battery ${ctx.battery.name} does not run here (phases: ${ctx.graph.phases.map((p) => p.name).join(', ')})`);
  return { phase, model };
}

/** What a shard expands: a slice of a root phase's items, of a dependent phase's source items, or the whole partition. */
function sliceOf(phase: PhaseSpec, shard: Shard): ItemSlice | undefined {
  if (phase.after.length === 0) return { phase: phase.name, start: shard.start, end: shard.end };
  if ((phase.shard ?? 'by-source') === 'partition') return undefined;
  return { phase: phase.after[0]!.phase, start: shard.start, end: shard.end };
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
  const { writer } = io;

  // Each copy takes its share of the rate limits: every copy of the wave may call the same model.
  const phasesHere = graph.phases.filter((p) => e.Items.some((s) => s.phase === p.name));
  const copies = e.BatchInput.copies ?? waveCopies(ctx, phasesHere);
  const limiters = new RateLimiters();
  const providerCtx = { seed: campaign.seed, file: campaign.file, onRateLimitHints: limiters.observe, ...(battery.simulator ? { simulator: battery.simulator } : {}) };
  // An overrun seen here stops every worker of the campaign: the ledger's flag moves its fence.
  const flagged: Promise<void>[] = [];
  const stop: StopState = {
    // A Retry-After above the ceiling stops that model's calls; the failure recorded says how to resume.
    resumeWith: '`sondage start --aws` again',
    overruns: new OverrunsMap((model, excessUsd) => {
      if (!deps.ledger.flagOverrun) return;
      flagged.push(deps.ledger.flagOverrun(campaign.name, model, excessUsd).catch((err: unknown) => log.error('overrun flag not written', { campaign: campaign.name, model, error: deps.redact(String(err)) })));
    }),
  };
  const shared: Omit<SharedPartitionFields, 'runId'> = {
    campaign: campaign.name,
    // Waits past the ceiling are not sat out here either: a worker has minutes, a Retry-After may say a day.
    retry: { ...DEFAULT_RETRY, maxWaitMs: DEFAULT_MAX_WAIT_MS },
    ledger,
    semaphore: inflight.semaphore(deps.inFlight ?? callsPerCopy(campaign, copies)),
    chunkSize: deps.chunkSize ?? 64,
    partRows: deps.partRows ?? 20_000,
    ...(deps.partMs !== undefined ? { partMs: deps.partMs } : {}),
    signal: deps.deadline.signal,
    onReply: () => deps.deadline.check(),
    onUnanswered: (journalPath, reservedUsd) => inflight.noteUnanswered(journalPath, reservedUsd),
    ...(deps.deadline.leftMs ? { mayStartCall: (attemptTimeoutMs: number) => deps.deadline.leftMs!() > attemptTimeoutMs } : {}),
    stop,
    // Items failed permanently are asked again (`sondage start --aws --retry-failed`).
    ...(retryFailed ? { retryFailed: true } : {}),
  };
  const total: Totals = { done: 0, failed: 0, pending: 0, openBatches: 0, costUsd: 0, keyBlocked: 0, waitBlocked: 0 };
  // Messages of rejected keys already recorded by this invocation (one record per provider).
  const keyRecorded = new Set<string>();
  // Held while this invocation may reserve: a plan that moves the fence waits for it to end.
  const lease = await holdLease(deps.ledger, campaign.name, deps.invocation, deps.leaseMs, (err) => log.warn('worker lease not renewed', { campaign: campaign.name, error: deps.redact(String(err)) }));
  try {
    for (const shard of e.Items) {
      const { phase, model } = checkShard(ctx, shard);
      if (stop.reason) {
        // Not started: every item of the shard still to do.
        total.pending += await pendingOfShard(ctx, ledger, phase, model, shard, retryFailed);
        continue;
      }
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
          writer,
          store,
          { campaign: campaign.name, phase: phase.name, model: shard.model, language: shard.language, partName: `part-plan-${shard.start}-${shard.end}.parquet` },
          items,
          battery.prompts,
        );
      }
      const provider = rateLimited(limiters, await createProvider({ ...entry, role: phase.answeredBy === 'subject' ? 'subject' : phase.answeredBy.role }, providerCtx), copyLimits(entry, copies));
      const batch = shard.mode === 'batch' ? await createBatchClient(entry, providerCtx) : undefined;
      const folder = graph.readingsFolder(phase);
      const spec = partitionSpec(
        { ...shared, runId: shardRunId(deps.invocation, shard) },
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
          store: inflight.counted(store),
          writer: inflight.counted(writer),
          // One folder per shard: two shards of a partition in one container must not adopt each other's journals.
          journalDir: join(deps.scratch, 'journal', phase.name, `model=${shard.model}`, `language=${shard.language}`, `shard=${shard.start}-${shard.end}`),
          // Named in the message when the provider rejects the key (the variable, never the key).
          keyEnv: entry.api_key_env,
          timeoutS: entry.timeout_s,
        },
      );
      inflight.reset(!dependent && (await registered(ctx, store, phase, model, shard)));
      if (!batch) {
        await restoreOrphanParts({ store, ledger, partToJournal: io.partToJournal, campaign: campaign.name, execution, shard, journalDir: spec.journalDir, scratch: join(deps.scratch, 'orphans') });
      }
      let out: PartitionOutcome;
      try {
        out = batch ? await runBatchPartition({ ...spec, batch, pollMs: 0, once: true }) : await runPartition(spec);
      } catch (err) {
        if (await salvage(err, { spec, batch: batch !== undefined, inflight, deps })) throw err;
        // What it journaled is lost or its reservations still held: invoking the batch again at
        // once could ask and hold twice; the give-up step and the next execution settle it.
        throw new ShardNotSalvagedError(`${shard.phase} ${shard.model}/${shard.language} [${shard.start}, ${shard.end}): ${deps.redact(String(err))}; its journal could not be committed, so the batch is not invoked again in this execution`, { cause: err });
      }
      const open = batch ? (await ledger.openBatches(campaign.name, phase.name, shard.model, shard.language)).length : 0;
      total.done += out.done + out.adopted;
      total.failed += out.failed;
      total.pending += out.pending;
      total.openBatches += open;
      total.costUsd += out.costUsd;
      if (out.keyFailure !== undefined) {
        // Not in `pending`: another invocation cannot help until the key is fixed, so these items
        // do not make the Map loop; they stay pending in the ledger for the next execution.
        total.keyBlocked += out.keyBlocked ?? 0;
        if (!keyRecorded.has(out.keyFailure)) {
          keyRecorded.add(out.keyFailure);
          const message = deps.redact(out.keyFailure);
          log.error('provider rejected the API key', { campaign: campaign.name, phase: phase.name, execution, model: shard.model, detail: message });
          await deps.recordFailure({ campaign: campaign.name, execution, at: new Date().toISOString(), error: 'ProviderKeyRejected', cause: `${phase.name}: ${message}` });
        }
      }
      if (out.waitStop !== undefined) {
        // Like a rejected key: not in `pending`, since invoking again before the provider's time meets the same wait.
        total.waitBlocked += out.waitBlocked ?? 0;
        if (!keyRecorded.has(out.waitStop)) {
          keyRecorded.add(out.waitStop);
          const message = deps.redact(out.waitStop);
          log.error('provider asked for a longer wait than a worker waits', { campaign: campaign.name, phase: phase.name, execution, model: shard.model, detail: message });
          await deps.recordFailure({ campaign: campaign.name, execution, at: new Date().toISOString(), error: 'ProviderWaitTooLong', cause: `${phase.name}: ${message}` });
        }
      }
      if (dependent && out.pending === 0 && open === 0) await markSettled(ctx, ledger, store, phase, shard, partition, items);
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

/** What the give-up step of a failed worker batch returns (the child execution then fails). */
export interface GiveUpOutput {
  /** Items recorded failed: pending before, asked again by the next `start --aws` (with or without --retry-failed). */
  readonly failed: number;
  /** The shards, as `phase model/language [start, end)`. */
  readonly shards: readonly string[];
}

/**
 * The item processor's give-up step (infra/constructs/Pipeline.ts): the worker invocation for a
 * batch of shards failed after its retries (its salvage committed what it had journaled). The
 * items of those shards still pending are recorded failed (not permanently: every later start,
 * `--retry-failed` or not, asks them again, as the plan lists shards with items not done), and the
 * failure, naming the shards, goes into the ledger for `sondage status --aws`. With
 * `aws.tolerated_failure_percentage` above 0 the wave goes on without them; the execution's
 * report then counts them failed instead of leaving them pending with nobody working on them.
 * A dependent shard whose items cannot be built (its inputs are what failed) is only named: it has
 * no done marker, so the next start plans it again anyway.
 */
export async function giveUpShards(ctx: RunContext, e: WorkerEvent, failure: { readonly Error?: string; readonly Cause?: string }, deps: ShardRunnerDeps): Promise<GiveUpOutput> {
  const { campaign } = ctx;
  const { execution } = e.BatchInput;
  const ledger = deps.ledger;
  const shards: string[] = [];
  let failed = 0;
  let io: ParquetSession | undefined;
  try {
    for (const shard of e.Items) {
      const { phase, model } = checkShard(ctx, shard);
      const label = `${phase.name} ${shard.model}/${shard.language} [${shard.start}, ${shard.end})`;
      shards.push(label);
      let ids: string[];
      try {
        const upstream =
          phase.after.length > 0
            ? (await shardUpstream(ctx, deps.store, (io ??= await deps.parquet.session(join(deps.scratch, 'parquet'))), join(deps.scratch, 'inputs', `${shard.start}-${shard.end}`), phase, model, shard)).upstream
            : undefined;
        ids = new PartitionItems({ ctx, model, language: shard.language, upstream, slice: sliceOf(phase, shard) }).items(phase.name).map((i) => i.item_id);
      } catch (err) {
        deps.log.error('gave up on a shard whose items could not be built: the next start plans it again', { campaign: campaign.name, execution, shard: label, error: deps.redact(String(err)) });
        continue;
      }
      const part = { phase: phase.name, model: shard.model, language: shard.language };
      await ledger.registerItems(campaign.name, part, ids);
      const pending = [...(await ledger.pendingAmong(campaign.name, part, ids))];
      if (pending.length === 0) continue;
      try {
        await ledger.commitPart({ campaign: campaign.name, ...part, partKey: `gave-up-${deps.invocation}-${phase.name}-${shard.start}`, done: [], failed: pending, costUsd: 0 });
      } catch (err) {
        // The give-up step delivered twice: its items are already recorded.
        if (!(err instanceof PartCommittedError)) throw err;
      }
      failed += pending.length;
    }
  } finally {
    await io?.close();
    await rm(deps.scratch, { recursive: true, force: true });
  }
  const error = deps.redact(`${failure.Error ?? 'Error'}: ${failure.Cause ?? ''}`).slice(0, 2_000);
  const cause =
    `the worker batch of ${shards.join('; ')} failed after its retries (${error}); ${failed} item(s) still pending are recorded failed: ` +
    '`sondage start --aws` (with or without --retry-failed) asks them again';
  deps.log.error('gave up on a batch of shards', { campaign: campaign.name, execution, shards, failed, error });
  await deps.recordFailure({ campaign: campaign.name, execution, at: new Date().toISOString(), error: 'ShardFailed', cause });
  return { failed, shards };
}

/**
 * Reply parts of this shard that an invocation of an earlier execution stored and never committed
 * (killed between a part's upload and its ledger commit; on Lambda its journal went with its
 * /tmp). Each is turned back into the journal it was made from, in the shard's journal folder, so
 * that runPartition's adoptJournals commits its replies whose items are still pending, once, under
 * the same part name (the rewrite replaces the orphan, and its readings are written from it).
 * Without this the items were asked again and their replies stored twice, the first copy paid for
 * but never counted. Parts of this execution are left alone: a live invocation may be committing
 * one right now (part names start with the invocation, which starts with the execution).
 */
async function restoreOrphanParts(o: {
  readonly store: BlobStore;
  readonly ledger: Ledger;
  readonly partToJournal: ParquetSession['partToJournal'];
  readonly campaign: string;
  readonly execution: string;
  readonly shard: Shard;
  readonly journalDir: string;
  readonly scratch: string;
}): Promise<number> {
  const { store, ledger, shard } = o;
  // runPartition names a part after its journal: part-<invocation>-<phase>-<shard start>[-<shard end>]-<phase>-<seq>.parquet (shardRunId; older parts lack the end)
  const ours = new RegExp(`-${shard.phase}-${shard.start}(-\\d+)?-${shard.phase}-$`);
  const keys = (await store.list(partitionPrefix(o.campaign, shard.phase, 'replies', shard.model, shard.language))).filter((key) => {
    const name = key.slice(key.lastIndexOf('/') + 1);
    const m = /^part-(.+-)\d{5}\.parquet$/.exec(name);
    return m !== null && ours.test(m[1]!) && !name.startsWith('part-batch-') && !name.startsWith(`part-${executionToken(o.execution)}-`);
  });
  if (keys.length === 0) return 0;
  const committed = await ledger.committedParts(o.campaign, shard.phase);
  let restored = 0;
  for (const key of keys) {
    if (committed.has(key)) continue;
    const body = await store.get(key);
    if (body === undefined) continue;
    const name = key.slice(key.lastIndexOf('/') + 1);
    const staged = join(o.scratch, name);
    await mkdir(o.scratch, { recursive: true });
    await mkdir(o.journalDir, { recursive: true });
    await writeFile(staged, body);
    const journal = join(o.journalDir, `${name.slice('part-'.length, -'.parquet'.length)}.ndjson`);
    // The part's rows as the journal held them: the partition keys are in the path, not the file.
    await o.partToJournal(staged, journal, { model: shard.model, language: shard.language });
    await rm(staged, { force: true });
    restored++;
  }
  return restored;
}

/** Whether the plan registered a root phase's partition: its marker holds the digest of the ids expanded here. */
async function registered(ctx: RunContext, store: BlobStore, phase: PhaseSpec, model: ModelEntry, shard: Shard): Promise<boolean> {
  const body = await store.get(registeredKey(ctx.campaign.name, phase.name, shard));
  if (body === undefined) return false;
  // The marker is of the whole partition: expand it unsliced to compare.
  const whole = new PartitionItems({ ctx, model, language: shard.language }).items(phase.name);
  return Buffer.from(body).toString('utf8') === registeredDigest(whole.map((i) => i.item_id));
}

/**
 * Leaves a dependent shard's done marker (shardDoneKey) once its slice can change no more: every
 * source item settled in its phase, and every item of this phase settled.
 */
async function markSettled(ctx: RunContext, ledger: Ledger, store: BlobStore, phase: PhaseSpec, shard: Shard, partition: PartitionItems, items: readonly PromptItem[]): Promise<void> {
  const name = ctx.campaign.name;
  for (const ref of phase.after) {
    const sources = partition.items(ref.phase);
    if ((await ledger.pendingAmong(name, { phase: ref.phase, model: shard.model, language: shard.language }, sources.map((i) => i.item_id))).size > 0) return;
  }
  if ((await ledger.pendingAmong(name, { phase: phase.name, model: shard.model, language: shard.language }, items.map((i) => i.item_id))).size > 0) return;
  await store.put(shardDoneKey(name, phase.name, shard), new Date().toISOString());
}

/**
 * Items of a shard not started (the deadline or the budget stopped the invocation first): a root
 * phase's items the ledger has pending, or, for a dependent phase, its source items it builds on
 * (its items are built from the replies only when it runs).
 */
async function pendingOfShard(ctx: RunContext, ledger: Ledger, phase: PhaseSpec, model: ModelEntry, shard: Shard, retryFailed: boolean): Promise<number> {
  const partition = new PartitionItems({ ctx, model, language: shard.language, slice: sliceOf(phase, shard) });
  if (phase.after.length > 0) {
    const sources = partition.items(phase.after[0]!.phase);
    return sources.filter((i) => phase.consumes?.(i) ?? true).length;
  }
  const items = partition.items(phase.name);
  return (await ledger.pendingAmong(ctx.campaign.name, { phase: phase.name, model: shard.model, language: shard.language }, items.map((i) => i.item_id), { retryFailed })).size;
}

/**
 * A shard failed and its salvage did not finish (its part commits did not end in time, or the
 * adoption of its journals failed): the batch must not be invoked again within the execution, as
 * its reservations may still be held and its replies in a part not committed.
 */
export class ShardNotSalvagedError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ShardNotSalvagedError';
  }
}

/** How long a failed shard waits for its calls and commits to end before it adopts its journals. */
const QUIET_MAX_MS = 30_000;

/**
 * After a shard's runner threw (a provider bug, an S3 or DynamoDB error): stops the calls still in
 * flight, waits for them and their part commits to end, then commits the journals they left in the
 * scratch folder, which does not outlive the invocation, and settles the reservations the shard
 * still holds in one commit: the attempts that were sent and never answered (those the abort cut
 * off among them) move to possibly billed at what they reserved, as a part's commit would have
 * counted them, and the rest goes back. The replies paid for are kept, their items are not asked
 * again, no call that may have been billed counts $0, and the money is not held until the next
 * plan's orphanStale. A batch shard's journals are rebuilt from the provider's results by the
 * invocation that re-attaches, and its reservations stay with its open batches. The runner's error
 * is thrown by the caller either way. False when the salvage could not finish (ShardNotSalvagedError).
 */
async function salvage(err: unknown, s: { spec: PartitionSpec; batch: boolean; inflight: ShardWork; deps: ShardRunnerDeps }): Promise<boolean> {
  const { spec, inflight, deps } = s;
  const where = { campaign: spec.campaign, phase: spec.phase, model: spec.model, language: spec.language, journalDir: spec.journalDir };
  const error = deps.redact(String(err));
  deps.deadline.abort();
  // A provider batch's reservation stays with its batch row: the next poll collects it.
  if (s.batch) return true;
  const quiet = await inflight.quiet(Math.min(QUIET_MAX_MS, Math.max(0, deps.remainingMs() - 10_000)));
  if (!quiet) {
    // Adopting while a commit of the same journal runs could store its replies twice. The
    // reservations stay held: the next plan counts them possibly billed (orphanStale).
    deps.log.error('shard failed and did not get quiet: its uncommitted replies are lost', { ...where, error });
    return false;
  }
  try {
    // Read before the adoption, whose commits (without it) clear it.
    const possiblyBilledUsd = inflight.unansweredUsd;
    const adopted = await adoptJournals(spec, new Map(spec.items.map((i) => [i.item_id, i])));
    const held = inflight.reservations;
    if (held.length > 0 || possiblyBilledUsd > 0) {
      await spec.ledger.commitPart({
        campaign: spec.campaign,
        ...ledgerPartition(spec),
        // No replies: the record of this settlement, once (a part key is committed once).
        partKey: `salvage-${spec.runId}`,
        done: [],
        failed: [],
        reservationIds: held,
        costUsd: 0,
        possiblyBilledUsd,
      });
    }
    deps.log.warn('shard failed; what it had journaled is committed', { ...where, adopted, settled: held.length, possiblyBilledUsd, error });
    return true;
  } catch (adoptErr) {
    deps.log.error('shard failed and its journals could not be committed', { ...where, error, adoptError: deps.redact(String(adoptErr)) });
    return false;
  }
}
