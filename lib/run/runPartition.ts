/**
 * The synchronous runner of one (phase, model, language) partition: chunks of calls reserved
 * against the budget, journaled as they come back, committed part by part. What it takes and
 * returns is in partitionTypes.ts; a part in the making and its commit in openPart.ts; what an
 * attempt means for the ledger in attemptVerdict.ts; the reply row in replyRow.ts; the adoption of
 * a killed run's journals in adoptJournals.ts.
 */
import type { PromptItem } from '../core/types.js';
import { ledgerPartition } from '../store/types.js';
import { registerAndAdopt } from './adoptJournals.js';
import { attemptVerdict } from './attemptVerdict.js';
import { type Attempt, callWithRetry } from './callWithRetry.js';
import { commitOpenPart, type OpenPart, openPartSync } from './openPart.js';
import type { PartitionOutcome, PartitionSpec } from './partitionTypes.js';
import { replyRow, type ReplySource } from './replyRow.js';
import { lookupOf, SlicedItems } from './slicedItems.js';
import { sleep } from './sleep.js';
import { keyScope, noteKeyFailure, noteOverrun } from './stopState.js';
import { noteWaitStop, scopeSignal } from './waitStops.js';

/** How often a partition that the cap holds back looks whether other partitions have settled. */
const RESERVED_POLL_MS = 20;

/**
 * Sealed parts a partition may have waiting for their commit before it starts another chunk. Calls
 * answered faster than parts are committed (simulated models; a fast endpoint) piled sealed parts
 * up, each with its rows: a heap snapshot of a P(True) partition thread at the paper's size held
 * 153,000 reply rows, most of them in parts queued behind the commit before them. One part
 * committing while the open part fills keeps a partition's rows at about two parts.
 */
const MAX_QUEUED_PARTS = 1;

/**
 * Runs the pending items of one (phase, model, language) partition: reserve a chunk's maximum cost,
 * call the provider under the shared concurrency bound, journal every attempt as it arrives, and
 * commit full parts (Parquet + ledger, with the chunk reservations settled to the actual cost in
 * the same ledger transaction). Journals left by a killed run are adopted first. A partition given
 * in slices (SlicedItems) is registered, adopted and looked up whole, by id, and asked a slice at a
 * time: a slice's items are held only while its chunks are in flight.
 */
export async function runPartition(spec: PartitionSpec): Promise<PartitionOutcome> {
  const byId = lookupOf(spec.items);
  const adopted = await registerAndAdopt(spec, byId);
  const ids = [...byId.keys()];
  const pendingIds = await spec.ledger.pendingAmong(spec.campaign, ledgerPartition(spec), ids, { retryFailed: spec.retryFailed === true });
  const pendingCount = ids.reduce((n, id) => n + (pendingIds.has(id) ? 1 : 0), 0);
  const run = new PartitionRun(spec);
  const slices = spec.items instanceof SlicedItems ? spec.items.slicesHolding(pendingIds) : [spec.items];
  for (const slice of slices) {
    if (!(await run.askAll(slice.filter((i) => pendingIds.has(i.item_id))))) break;
  }
  await run.finish();
  return run.outcome(pendingCount, adopted);
}

/**
 * Runs a partition no run has begun (no item registered, no journal: lib/run/onePassPartition.ts)
 * in one pass over its slices: each slice is registered and asked as it comes, after `onSlice` has
 * seen it and its ids (its prompt rows, its digests), and is then let go. The two-pass way — register and
 * index the whole partition, then ask — holds a root partition's items whole, and expands a
 * dependent partition in slices twice. Once the run must stop (the cap, a key failure, an abort)
 * the remaining slices are still registered and shown to `onSlice`, not asked: the partition then
 * stands as the two-pass way leaves it, every item registered, the ones not asked pending.
 * Returns the outcome and the partition's item count.
 */
export async function runPartitionInOnePass(
  spec: PartitionSpec,
  slices: Iterable<readonly PromptItem[]>,
  onSlice: (items: readonly PromptItem[], ids: readonly string[]) => void,
): Promise<{ outcome: PartitionOutcome; items: number }> {
  const partition = ledgerPartition(spec);
  const run = new PartitionRun(spec);
  let items = 0;
  let asking = true;
  let failure: { readonly err: unknown } | undefined;
  // A slice's registration is not waited for before its calls start: the ledger runs its calls in
  // the order they are made (one connection; a thread's calls cross in order), so it is registered
  // before any commit of its replies. Waiting for each (a round trip to the main thread from a
  // partition thread) left a thread idle between slices. Each is waited for at the end, and a
  // failed one stops the calls, as a failed commit does.
  const registered: Promise<void>[] = [];
  try {
    for (const slice of slices) {
      if (failure) break;
      const ids = slice.map((i) => i.item_id);
      onSlice(slice, ids);
      items += slice.length;
      registered.push(
        spec.ledger.registerItems(spec.campaign, partition, ids).catch((err: unknown) => {
          failure ??= { err };
        }),
      );
      if (asking && !failure) asking = await run.askAll(slice);
    }
  } catch (err) {
    failure ??= { err };
  }
  await Promise.all(registered);
  // The chunks in flight end and their parts are committed even when the pass failed: what was
  // asked is kept. The pass's own error is the one thrown.
  try {
    await run.finish();
  } catch (err) {
    failure ??= { err };
  }
  if (failure) throw failure.err;
  return { outcome: run.outcome(items, 0), items };
}

/** How a chunk's reservation went: made, worth trying again (smaller, or after others settled), or the budget is spent. */
type Reservation = 'reserved' | 'again' | 'spent';

/** The state of one partition's run: its open part, the chunks in flight, the commits queued. */
class PartitionRun {
  private readonly source: ReplySource;
  /**
   * With a timer (`partMs`, the GPU job) outcomes go to the part open when they arrive, and a
   * chunk's reservations to the part open when the chunk ends (later than its replies' cost, so
   * the budget over-counts for a moment, never under-counts): a sealed part is committed at once,
   * not when the chunks that wrote to it end. It waited for them, and one call held for minutes
   * kept every reply of its part uncommitted, which a job killed outright then lost, whatever the
   * timer said. Without a timer a part holds whole chunks, their replies with their reservations.
   */
  private readonly follow: boolean;
  /** Only a run with a ceiling on waits can stop a scope's waiting calls; without one the run's signal serves. */
  private readonly waitSignal: AbortSignal | undefined;
  private seq = 0;
  /** Pending items started before the slice askAll is on: reservation ids number the partition's chunks, not a slice's. */
  private started = 0;
  private current: OpenPart;
  private chunk: number;
  private readonly inFlight = new Set<Promise<void>>();
  private flushing: Promise<void> = Promise.resolve();
  /** The commits queued and not ended, oldest first (each ends after the one before it). */
  private readonly queued: Promise<void>[] = [];
  private readonly flushErrors: unknown[] = [];
  private done = 0;
  private failed = 0;
  private costUsd = 0;

  constructor(private readonly spec: PartitionSpec) {
    this.source = { ...spec, providerId: spec.provider.id, simulated: spec.provider.simulated };
    this.follow = spec.partMs !== undefined;
    this.waitSignal = spec.retry.maxWaitMs !== undefined ? scopeSignal(spec.stop, keyScope(spec), spec.signal) : spec.signal;
    this.chunk = spec.chunkSize;
    this.current = this.openPart();
  }

  /** Reserves and starts chunks of `pending` until all are started or the run must stop; true when all were started. */
  async askAll(pending: readonly PromptItem[]): Promise<boolean> {
    const { spec } = this;
    const maxInFlight = 2 + Math.ceil(spec.semaphore.limit / Math.max(1, spec.chunkSize));
    let next = 0;
    while (next < pending.length && !spec.stop.reason && !this.keyStopped() && !this.waitStopped() && !this.storageFailed() && this.mayStart()) {
      if (this.queued.length >= MAX_QUEUED_PARTS) {
        await this.queued[0];
        continue;
      }
      // Replies come faster than the journal reaches the disk: no more calls until it has.
      if (this.current.journal.backlogged) {
        await this.current.journal.drained();
        continue;
      }
      if (spec.signal?.aborted) {
        spec.stop.reason = 'aborted';
        break;
      }
      const items = pending.slice(next, next + Math.min(this.chunk, pending.length - next));
      const reservationId = `${spec.runId}:${spec.phase}:${spec.model}:${spec.language}:${this.started + next}`;
      const reservation = await this.reserveChunk(items, reservationId);
      if (reservation === 'again') continue;
      if (reservation === 'spent') break;
      next += items.length;
      if (!this.follow) this.current.active++;
      const p = this.runChunk(this.current, items, reservationId).finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
      if (this.inFlight.size >= maxInFlight) await Promise.race(this.inFlight);
    }
    this.started += next;
    return next === pending.length;
  }

  /** Waits for the chunks in flight and commits what is left open; throws a commit's error. */
  async finish(): Promise<void> {
    await Promise.all(this.inFlight);
    if (!this.current.sealed) {
      this.current.sealed = true;
      if (this.follow || this.current.active === 0) this.flush(this.current);
    }
    await this.flushing;
    if (this.flushErrors.length > 0) throw this.flushErrors[0];
  }

  outcome(pendingCount: number, adopted: number): PartitionOutcome {
    const { spec, done, failed, costUsd } = this;
    const left = pendingCount - done - failed;
    const keyFailure = spec.stop.keyFailures?.get(keyScope(spec));
    if (keyFailure !== undefined) return { done, failed, adopted, costUsd, pending: 0, keyFailure, keyBlocked: left };
    const waitStop = spec.stop.waitStops?.get(keyScope(spec));
    if (waitStop !== undefined) return { done, failed, adopted, costUsd, pending: 0, waitStop, waitBlocked: left };
    return { done, failed, adopted, costUsd, pending: left };
  }

  /**
   * Reserves the chunk's maximum cost. Near the cap: wait for chunks in flight to settle, commit
   * the open part (its reservations settle at their actual cost), then try smaller chunks, down to
   * one call; the budget is spent only when nothing is reserved anywhere and one call still does
   * not fit.
   */
  private async reserveChunk(items: readonly PromptItem[], reservationId: string): Promise<Reservation> {
    const { spec } = this;
    const amount = items.reduce((sum, i) => sum + spec.maxCost(i), 0);
    const scope = { phase: spec.phase, model: spec.model, language: spec.language, itemIds: items.map((i) => i.item_id) };
    if (await spec.ledger.reserve(spec.campaign, reservationId, amount, scope)) return 'reserved';
    if (this.inFlight.size > 0) {
      await Promise.race(this.inFlight);
      await this.flushing;
      return 'again';
    }
    // Settle this partition's reservations at their actual cost (a part without rows hands its
    // reservations back), so that only other partitions' calls can still hold budget.
    if ((this.current.rows.length > 0 || this.current.reservations.length > 0) && !this.current.sealed) {
      this.seal(this.current);
      await this.flushing;
      return 'again';
    }
    if (this.chunk > 1) {
      this.chunk = Math.max(1, Math.floor(this.chunk / 2));
      return 'again';
    }
    // Other partitions' calls settle far below what they reserved (max_tokens is rarely used).
    if ((await spec.ledger.budget(spec.campaign)).reserved_usd > 0) {
      await sleep(RESERVED_POLL_MS, spec.signal);
      return 'again';
    }
    spec.stop.reason = 'budget';
    return 'spent';
  }

  private async runChunk(chunkPart: OpenPart, items: readonly PromptItem[], reservationId: string): Promise<void> {
    // The chunk's reservations (its own, and retries' of unanswered attempts): settled with its part, or the part open when it ends.
    const reservations = [reservationId];
    try {
      await Promise.all(items.map((item) => this.spec.semaphore.run(() => this.askItem(chunkPart, item, reservationId, reservations))));
    } finally {
      this.endChunk(chunkPart, reservations);
    }
  }

  /** One item's call with its retries; each attempt journaled, the last one's verdict recorded. */
  private async askItem(chunkPart: OpenPart, item: PromptItem, reservationId: string, reservations: string[]): Promise<void> {
    const { spec } = this;
    // After a key error, items not yet sent stay pending: each call would fail the same way.
    if (spec.signal?.aborted || this.keyStopped() || this.waitStopped() || spec.stop.reason === 'overrun' || !this.mayStart()) return;
    const reserved = spec.maxCost(item);
    // A retry the deadline leaves no time for leaves its item pending for the next invocation.
    let tooLate = false;
    // The part this item's last row went to: its verdict goes there while it is open.
    let rowPart = chunkPart;
    const mayStartNow = (): boolean => {
      if (this.mayStart()) return true;
      tooLate = true;
      return false;
    };
    const final = await callWithRetry(
      spec.provider,
      { messages: item.messages, settings: item.settings, item },
      spec.retry,
      (a) => (rowPart = this.recordAttempt(chunkPart, item, reserved, a)),
      spec.signal,
      1,
      // A retry after an unanswered attempt is a new call that may be billed: it reserves again.
      async (failed) => {
        if (!mayStartNow()) return false;
        if (!failed.unanswered) return true;
        const id = `${reservationId}:${item.item_id}:${failed.attempt + 1}`;
        if (!(await spec.ledger.reserve(spec.campaign, id, reserved, { ...ledgerPartition(spec), itemIds: [item.item_id] }))) return false;
        reservations.push(id);
        return true;
      },
      // Checked again right before each attempt: a turn behind the rate limit or a backoff may have used the time.
      { watch: spec.watch, waitSignal: this.waitSignal, mayStart: mayStartNow },
    );
    // An attempt the deadline refused (the first: nothing was sent): the item is pending.
    if (!final.ok && tooLate) return;
    if (!final.ok && final.waitTooLongMs !== undefined && spec.retry.maxWaitMs !== undefined) {
      noteWaitStop(spec.stop, keyScope(spec), { providerId: spec.provider.id, phase: spec.phase, endpoint: spec.provider.endpoint }, final.waitTooLongMs, spec.retry.maxWaitMs);
    }
    // A call the wait stop cut short (or refused a retry) says nothing about its item: pending.
    if (!final.ok && this.waitStopped()) return;
    this.recordVerdict(rowPart.sealed && this.follow ? this.current : rowPart, item, final);
  }

  /** Journals one attempt's row in the part it belongs to; returns that part. */
  private recordAttempt(chunkPart: OpenPart, item: PromptItem, reserved: number, a: Attempt): OpenPart {
    const { spec } = this;
    const row = replyRow(this.source, item, a, a.attempt, a.latencyMs, jsonOf(a.ok ? (a.result.settings_sent ?? item.settings) : item.settings));
    const part = this.partForRow(chunkPart);
    part.journal.append(row, !a.ok && a.unanswered ? reserved : undefined);
    part.rows.push(row);
    if (row.status === 'ok') for (const reading of spec.readReply(item, row)) part.readings.push(reading);
    part.cost += row.cost_usd;
    // Sent and never answered: the provider may have billed it. Its reservation stays charged.
    if (!a.ok && a.unanswered) {
      part.possiblyBilled += reserved;
      spec.onUnanswered?.(part.journal.path, reserved);
    }
    // Relative slack for float sums only: a real overrun is far above it.
    if (row.cost_usd > reserved * (1 + 1e-9) + 1e-12) noteOverrun(spec.stop, spec.provider.id, row.cost_usd - reserved);
    spec.onReply?.(row);
    return part;
  }

  private recordVerdict(part: OpenPart, item: PromptItem, final: Attempt): void {
    const verdict = attemptVerdict(final, this.spec.signal?.aborted === true);
    if (verdict === 'done') part.done.push(item.item_id);
    else if (verdict === 'failed') part.failed.push(item.item_id);
    else if (verdict === 'failed_permanently') part.failedPermanently.push(item.item_id);
    else if (verdict === 'key' && !final.ok) noteKeyFailure(this.spec, final.errorClass, final.message);
  }

  /** A chunk has ended: its reservations join a part, which is sealed when full or old, and committed once no chunk writes to it. */
  private endChunk(chunkPart: OpenPart, reservations: readonly string[]): void {
    const { spec } = this;
    const part = this.follow ? this.current : chunkPart;
    part.reservations.push(...reservations);
    if (!this.follow) part.active--;
    const full = part.rows.length >= spec.partRows;
    const old = this.follow && part.rows.length > 0 && Date.now() - part.openedAt >= spec.partMs!;
    if (!part.sealed && (full || old) && part === this.current) this.seal(part);
    else if (part.sealed && part.active === 0 && !this.follow) this.flush(part);
  }

  private openPart(): OpenPart {
    return openPartSync(this.spec, this.seq++);
  }

  /**
   * Synchronous on purpose: sealing a part and replacing `current` must happen in one turn of the
   * event loop. With an await in between, the main loop attached new chunks to the sealed part and
   * a chunk finishing meanwhile flushed it too, so the part was committed twice (or committed
   * while a chunk still wrote to it).
   */
  private seal(part: OpenPart): void {
    part.sealed = true;
    if (part === this.current) this.current = this.openPart();
    if (this.follow || part.active === 0) this.flush(part);
  }

  /** Queues the part's commit behind the commits before it. */
  private flush(part: OpenPart): void {
    const committed = this.flushing.then(async () => {
      try {
        await commitOpenPart(this.spec, part);
        this.done += part.done.length;
        this.failed += part.failed.length + part.failedPermanently.length;
        this.costUsd += part.cost;
      } catch (err) {
        this.flushErrors.push(err);
      } finally {
        this.queued.shift();
      }
    });
    this.queued.push(committed);
    this.flushing = committed;
  }

  /** The part a row goes to (the timer armed when an open part gets its first row). */
  private partForRow(chunkPart: OpenPart): OpenPart {
    if (!this.follow) return chunkPart;
    const part = this.current;
    if (part.rows.length === 0) {
      setTimeout(() => {
        if (part === this.current && !part.sealed && part.rows.length > 0) this.seal(part);
      }, this.spec.partMs).unref();
    }
    return part;
  }

  private keyStopped(): boolean {
    return this.spec.stop.keyFailures?.has(keyScope(this.spec)) === true;
  }

  private waitStopped(): boolean {
    return this.spec.stop.waitStops?.has(keyScope(this.spec)) === true;
  }

  /** A simulated call is answered in-process and billed by no one: the deadline cannot cut it short. */
  private mayStart(): boolean {
    return this.spec.provider.simulated || (this.spec.mayStartCall?.(this.spec.retry.timeoutMs) ?? true);
  }

  /**
   * A journal or a part that cannot be written (a full disk): no further call is paid for a reply
   * that could not be kept. The other partitions stop starting chunks too; `finish` throws.
   */
  private storageFailed(): boolean {
    if (this.flushErrors.length === 0 && this.current.journal.failed === undefined) return false;
    this.spec.stop.reason ??= 'aborted';
    return true;
  }
}

// Items of a partition share one settings object: serialize it once, not once per reply.
const settingsJson = new WeakMap<object, string>();

function jsonOf(value: object): string {
  let json = settingsJson.get(value);
  if (json === undefined) settingsJson.set(value, (json = JSON.stringify(value)));
  return json;
}
