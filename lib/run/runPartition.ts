/**
 * The synchronous runner of one (phase, model, language) partition: chunks of calls reserved
 * against the budget, journaled as they come back, committed part by part. What it takes and
 * returns is in partitionTypes.ts; what an attempt means for the ledger in attemptVerdict.ts; the
 * reply row in replyRow.ts; the adoption of a killed run's journals in adoptJournals.ts.
 */
import { rm } from 'node:fs/promises';
import type { PromptItem } from '../core/types.js';
import type { ReplyRow } from '../store/types.js';
import { ledgerPartition } from '../store/types.js';
import { partNameOf, readingsOf, registerAndAdopt } from './adoptJournals.js';
import { attemptVerdict } from './attemptVerdict.js';
import { callWithRetry } from './callWithRetry.js';
import { Journal } from './Journal.js';
import type { PartitionOutcome, PartitionSpec } from './partitionTypes.js';
import { replyRow, type ReplySource } from './replyRow.js';
import { sleep } from './sleep.js';
import { keyScope, noteKeyFailure, noteOverrun } from './stopState.js';
import { noteWaitStop, scopeSignal } from './waitStops.js';

/** How often a partition that the cap holds back looks whether other partitions have settled. */
const RESERVED_POLL_MS = 20;

/** A part in the making: the journal its chunks append to, and what the commit will record. */
interface OpenPart {
  readonly seq: number;
  readonly journal: Journal;
  readonly rows: ReplyRow[];
  readonly done: string[];
  readonly failed: string[];
  readonly failedPermanently: string[];
  readonly reservations: string[];
  cost: number;
  /** Reservations of attempts sent and never answered (timeout, abort): counted as possibly billed at commit. */
  possiblyBilled: number;
  /** Chunks attached to the part and not ended (parts that follow the open part do not count them). */
  active: number;
  sealed: boolean;
  /** Date.now() when the part was opened (PartitionSpec.partMs). */
  readonly openedAt: number;
}

/**
 * Runs the pending items of one (phase, model, language) partition: reserve a chunk's maximum cost,
 * call the provider under the shared concurrency bound, journal every attempt as it arrives, and
 * commit full parts (Parquet + ledger, with the chunk reservations settled to the actual cost in
 * the same ledger transaction). Journals left by a killed run are adopted first.
 */
export async function runPartition(spec: PartitionSpec): Promise<PartitionOutcome> {
  const byId = new Map(spec.items.map((i) => [i.item_id, i]));
  const source: ReplySource = { ...spec, providerId: spec.provider.id, simulated: spec.provider.simulated };
  const adopted = await registerAndAdopt(spec, byId);
  const pendingIds = await spec.ledger.pendingAmong(spec.campaign, ledgerPartition(spec), [...byId.keys()], { retryFailed: spec.retryFailed === true });
  const pending = spec.items.filter((i) => pendingIds.has(i.item_id));
  const keyStopped = (): boolean => spec.stop.keyFailures?.has(keyScope(spec)) === true;
  const waitStopped = (): boolean => spec.stop.waitStops?.has(keyScope(spec)) === true;
  // Only a run with a ceiling on waits can stop a scope's waiting calls; without one the run's signal serves.
  const waitSignal = spec.retry.maxWaitMs !== undefined ? scopeSignal(spec.stop, keyScope(spec), spec.signal) : spec.signal;
  // A simulated call is answered in-process and billed by no one: the deadline cannot cut it short.
  const mayStart = (): boolean => spec.provider.simulated || (spec.mayStartCall?.(spec.retry.timeoutMs) ?? true);

  let done = 0;
  let failed = 0;
  let costUsd = 0;
  let seq = 0;
  let flushing: Promise<void> = Promise.resolve();
  const flushErrors: unknown[] = [];

  // Synchronous on purpose: sealing a part and replacing `current` must happen in one turn of the
  // event loop. With an await in between, the main loop attached new chunks to the sealed part and
  // a chunk finishing meanwhile flushed it too, so the part was committed twice (or committed
  // while a chunk still wrote to it).
  const openPart = (): OpenPart => {
    const n = seq++;
    return {
      seq: n,
      journal: Journal.openSync(spec.journalDir, `${spec.runId}-${spec.phase}-${String(n).padStart(5, '0')}.ndjson`),
      rows: [],
      done: [],
      failed: [],
      failedPermanently: [],
      reservations: [],
      cost: 0,
      possiblyBilled: 0,
      active: 0,
      sealed: false,
      openedAt: Date.now(),
    };
  };

  const flush = (part: OpenPart) => {
    flushing = flushing.then(async () => {
      try {
        await commitOpenPart(spec, part);
        done += part.done.length;
        failed += part.failed.length + part.failedPermanently.length;
        costUsd += part.cost;
      } catch (err) {
        flushErrors.push(err);
      }
    });
  };

  let current = openPart();
  /**
   * With a timer (`partMs`, the GPU job) outcomes go to the part open when they arrive, and a
   * chunk's reservations to the part open when the chunk ends (later than its replies' cost, so
   * the budget over-counts for a moment, never under-counts): a sealed part is committed at once,
   * not when the chunks that wrote to it end. It waited for them, and one call held for minutes
   * kept every reply of its part uncommitted, which a job killed outright then lost, whatever the
   * timer said. Without a timer a part holds whole chunks, their replies with their reservations.
   */
  const follow = spec.partMs !== undefined;
  const seal = (part: OpenPart) => {
    part.sealed = true;
    if (part === current) current = openPart();
    if (follow || part.active === 0) flush(part);
  };
  /** The part a row goes to (the timer armed when an open part gets its first row). */
  const partForRow = (chunkPart: OpenPart): OpenPart => {
    if (!follow) return chunkPart;
    const part = current;
    if (part.rows.length === 0) {
      setTimeout(() => {
        if (part === current && !part.sealed && part.rows.length > 0) seal(part);
      }, spec.partMs).unref();
    }
    return part;
  };
  let next = 0;
  let chunk = spec.chunkSize;

  const runChunk = async (chunkPart: OpenPart, items: readonly PromptItem[], reservationId: string) => {
    // The chunk's reservations (its own, and retries' of unanswered attempts): settled with its part, or the part open when it ends.
    const reservations = [reservationId];
    try {
      await Promise.all(
        items.map((item) =>
          spec.semaphore.run(async () => {
            // After a key error, items not yet sent stay pending: each call would fail the same way.
            if (spec.signal?.aborted || keyStopped() || waitStopped() || spec.stop.reason === 'overrun' || !mayStart()) return;
            const reserved = spec.maxCost(item);
            // A retry the deadline leaves no time for leaves its item pending for the next invocation.
            let tooLate = false;
            // The part this item's last row went to: its verdict goes there while it is open.
            let rowPart = chunkPart;
            const mayStartNow = (): boolean => {
              if (mayStart()) return true;
              tooLate = true;
              return false;
            };
            const final = await callWithRetry(
              spec.provider,
              { messages: item.messages, settings: item.settings, item },
              spec.retry,
              (a) => {
                const row = replyRow(source, item, a, a.attempt, a.latencyMs, jsonOf(a.ok ? (a.result.settings_sent ?? item.settings) : item.settings));
                const part = (rowPart = partForRow(chunkPart));
                part.journal.append(row, !a.ok && a.unanswered ? reserved : undefined);
                part.rows.push(row);
                part.cost += row.cost_usd;
                // Sent and never answered: the provider may have billed it. Its reservation stays charged.
                if (!a.ok && a.unanswered) {
                  part.possiblyBilled += reserved;
                  spec.onUnanswered?.(part.journal.path, reserved);
                }
                // Relative slack for float sums only: a real overrun is far above it.
                if (row.cost_usd > reserved * (1 + 1e-9) + 1e-12) noteOverrun(spec.stop, spec.provider.id, row.cost_usd - reserved);
                spec.onReply?.(row);
              },
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
              { watch: spec.watch, waitSignal, mayStart: mayStartNow },
            );
            // An attempt the deadline refused (the first: nothing was sent): the item is pending.
            if (!final.ok && tooLate) return;
            if (!final.ok && final.waitTooLongMs !== undefined && spec.retry.maxWaitMs !== undefined) {
              noteWaitStop(spec.stop, keyScope(spec), { providerId: spec.provider.id, phase: spec.phase, endpoint: spec.provider.endpoint }, final.waitTooLongMs, spec.retry.maxWaitMs);
            }
            // A call the wait stop cut short (or refused a retry) says nothing about its item: pending.
            if (!final.ok && waitStopped()) return;
            const verdict = attemptVerdict(final, spec.signal?.aborted === true);
            const part = rowPart.sealed && follow ? current : rowPart;
            if (verdict === 'done') part.done.push(item.item_id);
            else if (verdict === 'failed') part.failed.push(item.item_id);
            else if (verdict === 'failed_permanently') part.failedPermanently.push(item.item_id);
            else if (verdict === 'key' && !final.ok) noteKeyFailure(spec, final.errorClass, final.message);
          }),
        ),
      );
    } finally {
      const part = follow ? current : chunkPart;
      part.reservations.push(...reservations);
      if (!follow) part.active--;
      const full = part.rows.length >= spec.partRows;
      const old = follow && part.rows.length > 0 && Date.now() - part.openedAt >= spec.partMs!;
      if (!part.sealed && (full || old) && part === current) seal(part);
      else if (part.sealed && part.active === 0 && !follow) flush(part);
    }
  };

  const inFlight = new Set<Promise<void>>();
  const maxInFlight = 2 + Math.ceil(spec.semaphore.limit / Math.max(1, spec.chunkSize));
  // A journal or a part that cannot be written (a full disk): no further call is paid for a reply
  // that could not be kept. The other partitions stop starting chunks too; this one throws below.
  const storageFailed = (): boolean => {
    if (flushErrors.length === 0 && current.journal.failed === undefined) return false;
    spec.stop.reason ??= 'aborted';
    return true;
  };
  while (next < pending.length && !spec.stop.reason && !keyStopped() && !waitStopped() && !storageFailed() && mayStart()) {
    if (spec.signal?.aborted) {
      spec.stop.reason = 'aborted';
      break;
    }
    const size = Math.min(chunk, pending.length - next);
    const items = pending.slice(next, next + size);
    const amount = items.reduce((sum, i) => sum + spec.maxCost(i), 0);
    const reservationId = `${spec.runId}:${spec.phase}:${spec.model}:${spec.language}:${next}`;
    const scope = { phase: spec.phase, model: spec.model, language: spec.language, itemIds: items.map((i) => i.item_id) };
    if (!(await spec.ledger.reserve(spec.campaign, reservationId, amount, scope))) {
      // Near the cap: wait for in-flight chunks to settle, then try smaller reservations.
      if (inFlight.size > 0) {
        await Promise.race(inFlight);
        await flushing;
        continue;
      }
      // Settle this partition's reservations at their actual cost (a part without rows hands its
      // reservations back), so that only other partitions' calls can still hold budget.
      if ((current.rows.length > 0 || current.reservations.length > 0) && !current.sealed) {
        seal(current);
        await flushing;
        continue;
      }
      if (chunk > 1) {
        chunk = Math.max(1, Math.floor(chunk / 2));
        continue;
      }
      // Other partitions' calls settle far below what they reserved (max_tokens is rarely used):
      // the budget is spent only when nothing is reserved and one call still does not fit.
      if ((await spec.ledger.budget(spec.campaign)).reserved_usd > 0) {
        await sleep(RESERVED_POLL_MS, spec.signal);
        continue;
      }
      spec.stop.reason = 'budget';
      break;
    }
    next += size;
    if (!follow) current.active++;
    const p = runChunk(current, items, reservationId).finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= maxInFlight) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (!current.sealed) {
    current.sealed = true;
    if (follow || current.active === 0) flush(current);
  }
  await flushing;
  if (flushErrors.length > 0) throw flushErrors[0];
  const keyFailure = spec.stop.keyFailures?.get(keyScope(spec));
  const left = pending.length - done - failed;
  if (keyFailure !== undefined) return { done, failed, adopted, costUsd, pending: 0, keyFailure, keyBlocked: left };
  const waitStop = spec.stop.waitStops?.get(keyScope(spec));
  if (waitStop !== undefined) return { done, failed, adopted, costUsd, pending: 0, waitStop, waitBlocked: left };
  return { done, failed, adopted, costUsd, pending: left };
}

// Items of a partition share one settings object: serialize it once, not once per reply.
const settingsJson = new WeakMap<object, string>();

function jsonOf(value: object): string {
  let json = settingsJson.get(value);
  if (json === undefined) settingsJson.set(value, (json = JSON.stringify(value)));
  return json;
}

async function commitOpenPart(spec: PartitionSpec, part: OpenPart): Promise<void> {
  await part.journal.close();
  if (part.rows.length === 0) {
    // Nothing was asked (all chunks aborted): hand the reservations back.
    for (const r of part.reservations) await spec.ledger.release(spec.campaign, r);
    await rm(part.journal.path, { force: true });
    return;
  }
  const partName = partNameOf(part.journal.path);
  const byId = new Map(spec.items.map((i) => [i.item_id, i]));
  const repliesKey = await spec.sink.writeReplies(part.journal.path, partName, part.rows);
  await spec.sink.writeReadings(readingsOf(spec, byId, part.rows), partName);
  await spec.ledger.commitPart({
    campaign: spec.campaign,
    ...ledgerPartition(spec),
    partKey: repliesKey,
    done: part.done,
    failed: part.failed,
    failedPermanently: part.failedPermanently,
    reservationIds: part.reservations,
    costUsd: part.cost,
    ...(part.possiblyBilled > 0 ? { possiblyBilledUsd: part.possiblyBilled } : {}),
  });
  await spec.sink.publish?.(partName);
  await rm(part.journal.path, { force: true });
}
