import { rename, rm, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { LanguageCode, PromptItem } from '../core/types.js';
import type { TokenUsage } from '../pricing/pricing.js';
import type { GenerateResult, ModelProvider, Price } from '../providers/types.js';
import type { Ledger, ReadingRow, ReplyRow } from '../store/types.js';
import { ledgerPartition } from '../store/types.js';
import { callWithRetry, type RetryPolicy } from './callWithRetry.js';
import type { CallWatch } from './CallWatch.js';
import { noteWaitStop, scopeSignal, type WaitStopState } from './waitStops.js';
import { Journal, listJournals, readJournal } from './Journal.js';
import { sleep } from './sleep.js';
import type { Semaphore } from './Semaphore.js';

/** Journals of batch results are named `batch-<batch id>.ndjson` (lib/run/runBatchPartition.ts). */
export const BATCH_JOURNAL_PREFIX = 'batch-';

/** How often a partition that the cap holds back looks whether other partitions have settled. */
const RESERVED_POLL_MS = 20;

/**
 * Error classes about the API key or the account, not the item: every further call with
 * the key fails the same way, so the partition stops and its items stay pending for the next run.
 */
export const KEY_ERROR_CLASSES: ReadonlySet<string> = new Set(['auth', 'permission', 'payment_required']);

/**
 * Error classes that a journal row (which does not keep the retry decision) shows to be permanent:
 * the item's request itself is refused. Used when adopting a killed run's journal.
 */
const PERMANENT_ERROR_CLASSES: ReadonlySet<string> = new Set(['bad_request', 'not_found', 'refusal', 'content_filter', 'simulated_bad_request']);

/**
 * A reply that says nothing: no text (or only white space) and no logprobs. It is paid for and
 * stored as `empty`, never scored as an answer nor sent on to a judge or verifier, and recorded
 * failed for good like a refusal (`--retry-failed` asks it again). A one-token probe whose token is
 * end-of-text still has logprobs, and stays `ok`.
 */
export function isEmptyReply(r: Pick<GenerateResult, 'text' | 'logprobs'>): boolean {
  return (r.text ?? '').trim() === '' && (r.logprobs === undefined || r.logprobs === null || Object.keys(r.logprobs).length === 0);
}

/** What an item's last attempt means for the ledger. */
export type AttemptVerdict = 'done' | 'failed' | 'failed_permanently' | 'key' | 'pending';

/**
 * The ledger state an item's final attempt leads to ("permanent errors … recorded once,
 * not retried forever"): a success is done; a key or account error leaves the item pending (the
 * key is at fault, not the item); any other error a retry cannot fix fails the item for good
 * (`--retry-failed` asks it again); a transient error after the last retry fails it until the next
 * run; an attempt cut short by an abort leaves it pending.
 */
export function attemptVerdict(
  final: { readonly ok: boolean; readonly errorClass?: string; readonly retryable?: boolean; readonly result?: Pick<GenerateResult, 'text' | 'logprobs'> },
  aborted: boolean,
): AttemptVerdict {
  if (final.ok) return final.result !== undefined && isEmptyReply(final.result) ? 'failed_permanently' : 'done';
  if (aborted) return 'pending';
  if (final.errorClass !== undefined && KEY_ERROR_CLASSES.has(final.errorClass)) return 'key';
  // A call cut short without the run being stopped says nothing about the item: asked again.
  if (final.errorClass === 'aborted') return 'failed';
  return final.retryable === false ? 'failed_permanently' : 'failed';
}

/** Where the rows of one partition go once a part is complete. */
export interface PartSink {
  /**
   * Writes the replies part `partName`; returns its key. From `rows` when the caller still holds
   * the journal's rows (the part's own run: the journal is not read back), else by converting the
   * journal (NDJSON reply rows: a killed run's, or a batch's).
   */
  writeReplies(journalPath: string, partName: string, rows?: readonly ReplyRow[]): Promise<string>;
  /** The key `writeReplies` gives the part `partName` (to ask the ledger whether it is committed). */
  partKey(partName: string): string;
  /** Writes reading rows as a readings part. */
  writeReadings(rows: readonly ReadingRow[], partName: string): Promise<void>;
}

export interface PartitionSpec {
  readonly campaign: string;
  readonly phase: string;
  /** Partition keys: the model whose replies these are (for the judge phase, the judged model). */
  readonly model: string;
  readonly language: LanguageCode;
  readonly runId: string;
  readonly items: readonly PromptItem[];
  readonly provider: ModelProvider;
  readonly price: Price;
  readonly retry: RetryPolicy;
  /** Readings of one successful reply (rule readings, or the judge's label of the source item). */
  readReply(item: PromptItem, reply: ReplyRow): ReadingRow[];
  /** Reservation amount (USD) for one call to this item: prompt + max_tokens at list price. */
  maxCost(item: PromptItem): number;
  /** USD of one reply; `cached_input_tokens`, when present, at the cached-input price. */
  cost(usage: TokenUsage): number;
  readonly journalDir: string;
  readonly sink: PartSink;
  readonly ledger: Ledger;
  readonly semaphore: Semaphore;
  /** Items per reservation (halved near the cap, down to one). */
  readonly chunkSize: number;
  /** Reply rows per Parquet part. */
  readonly partRows: number;
  /**
   * Seal the open part once it is this old (ms), whatever its rows: what a hard kill can lose is
   * then at most this much work (the GPU job on Spot, gpu.commit_minutes). Checked as chunks end.
   */
  readonly partMs?: number;
  readonly signal?: AbortSignal;
  readonly onReply?: (row: ReplyRow) => void;
  /** Ask again the items whose last attempt failed permanently (`sondage run --retry-failed`). */
  readonly retryFailed?: boolean;
  /** The environment variable holding the provider's API key, named when the provider rejects it. */
  readonly keyEnv?: string;
  /**
   * The items are the whole partition for the current design (the local run), not a shard of it
   * (the Lambda worker): registered with `registerPartition`, so that ids the design dropped are
   * retired, and a killed run's held reservations of the partition resolved once its journals
   * are adopted.
   */
  readonly wholePartition?: boolean;
  /**
   * Shared by the partitions of a run. `reason`: the budget could not cover even one more call, or
   * the run was aborted: no new chunk starts anywhere. `keyFailures`: keyScope (provider model,
   * endpoint, key variable) → message, for keys a provider rejected: no partition of that scope
   * starts a new call; the same model at another endpoint goes on.
   */
  readonly stop: StopState;
  /**
   * Whether a call whose attempt may take `attemptTimeoutMs` can still start (the Lambda worker:
   * only while it can end before the deadline aborts it). A call not started leaves its item
   * pending, unpaid; absent, every call may start.
   */
  readonly mayStartCall?: (attemptTimeoutMs: number) => boolean;
  /** Sees the calls in flight and the waits before retries (the local run's progress line). */
  readonly watch?: CallWatch;
  /**
   * Told of each attempt sent and never answered, with the journal it is in and what it reserved:
   * the Lambda worker's salvage counts it possibly billed when a runner that threw leaves that
   * journal's part uncommitted (its commit would have counted it).
   */
  readonly onUnanswered?: (journalPath: string, reservedUsd: number) => void;
}

/** Why a run (or some of its partitions) stops starting calls; see `PartitionSpec.stop`. */
export interface StopState extends WaitStopState {
  reason?: 'budget' | 'aborted' | 'overrun';
  keyFailures?: Map<string, string>;
  /**
   * Calls whose provider reported more usage than the call reserved (a reservation is a bound for
   * any honest byte-level tokenizer, so this is a provider counting something else): the answering
   * model → USD spent past what its calls reserved. The first one stops every partition (`overrun`).
   */
  overruns?: Map<string, number>;
}

/**
 * Records a call that cost more than it reserved, and stops the campaign's new calls at once: the
 * cap holds only while each call costs at most its reservation. The cost is kept as reported.
 */
export function noteOverrun(stop: StopState, model: string, excessUsd: number): void {
  stop.reason ??= 'overrun';
  const overruns = (stop.overruns ??= new Map<string, number>());
  overruns.set(model, (overruns.get(model) ?? 0) + excessUsd);
}

export interface PartitionOutcome {
  readonly done: number;
  readonly failed: number;
  readonly adopted: number;
  readonly costUsd: number;
  readonly pending: number;
  /** Set when the provider rejected the API key: the message naming the model and the key's variable. */
  readonly keyFailure?: string;
  /**
   * Items left pending because the provider rejected the key: not in `pending`, which counts what
   * another pass of this run could still do (the Lambda worker asks to be invoked again for it;
   * for these only a new key helps).
   */
  readonly keyBlocked?: number;
  /** Set when the provider asked to wait longer than the run waits: the message says when to resume. */
  readonly waitStop?: string;
  /** Items left pending by that stop (not in `pending`, as `keyBlocked`). */
  readonly waitBlocked?: number;
  /** Stored readings read again because the design's reading inputs changed (lib/run/refreshReadings.ts), and how many of them changed. */
  readonly reread?: number;
  readonly rereadChanged?: number;
}

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
                part.journal.append(row);
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

/**
 * What a rejected key stops: the provider model at its endpoint with its key variable. Two
 * entries of one model at different base URLs (two vLLM servers, a proxy and the vendor) have
 * different keys: one rejected stops only its own calls. The model is part of it, as in the
 * provider id, because a 403 may refuse one model and not another on the same key.
 * @example keyScope({ provider: { id: 'openai/gpt-4.1-mini', endpoint: 'https://api.openai.com/v1' }, keyEnv: 'OPENAI_API_KEY' })
 */
export function keyScope(spec: { readonly provider: Pick<ModelProvider, 'id' | 'endpoint'>; readonly keyEnv?: string | undefined }): string {
  return `${spec.provider.id} ${spec.provider.endpoint ?? ''} ${spec.keyEnv ?? ''}`;
}

/**
 * Records that the provider rejected the API key (once per keyScope, for every partition of the
 * run). The message names the provider model, its endpoint and the variable, never the key:
 * adapters redact the key from their messages.
 */
function noteKeyFailure(spec: PartitionSpec, errorClass: string, message: string): void {
  const failures = (spec.stop.keyFailures ??= new Map<string, string>());
  const scope = keyScope(spec);
  if (failures.has(scope)) return;
  // Adapter messages start with the provider id, which the message names already.
  const detail = (message.startsWith(`${spec.provider.id}: `) ? message.slice(spec.provider.id.length + 2) : message).slice(0, 200);
  const where = spec.keyEnv !== undefined ? `the environment variable ${spec.keyEnv}` : "the environment variable the model's api_key_env names";
  const at = spec.provider.endpoint !== undefined ? ` at ${spec.provider.endpoint}` : '';
  failures.set(
    scope,
    `${spec.provider.id}: the provider rejected the API key (${errorClass}: ${detail})${at}; ` +
      `the ${spec.phase} calls of this model${at ? ' at this endpoint' : ''} stopped and its unanswered items stay pending. ` +
      `Check the key in ${where} (valid, allowed to use this model, with credit), then run again.`,
  );
}

// Items of a partition share one settings object: serialize it once, not once per reply.
const settingsJson = new WeakMap<object, string>();
function jsonOf(value: object): string {
  let json = settingsJson.get(value);
  if (json === undefined) settingsJson.set(value, (json = JSON.stringify(value)));
  return json;
}

// One ISO string per millisecond rather than one Date per reply.
let stampMs = 0;
let stamp = '';
function now(): string {
  const ms = Date.now();
  if (ms !== stampMs) {
    stampMs = ms;
    stamp = new Date(ms).toISOString();
  }
  return stamp;
}

/** What a stored reply row says about where it came from and how it is priced. */
export interface ReplySource {
  readonly campaign: string;
  readonly phase: string;
  readonly model: string;
  readonly language: LanguageCode;
  readonly providerId: string;
  readonly simulated: boolean;
  /** USD of one reply; `cached_input_tokens`, when present, at the cached-input price. */
  cost(usage: TokenUsage): number;
}

/** A call's outcome: a synchronous attempt and a batch result have this same shape. */
export type ReplyOutcome =
  | { readonly ok: true; readonly result: GenerateResult }
  | { readonly ok: false; readonly errorClass: string; readonly message: string };

/**
 * The stored row of one attempt, for the synchronous runner and the batch runner alike. One object
 * literal with a fixed key order for both outcomes: a million of these are built, and a single
 * shape keeps V8 on its fast path (spreading a base object was the hot spot).
 */
export function replyRow(
  src: ReplySource,
  item: PromptItem,
  o: ReplyOutcome,
  attempt: number,
  latencyMs: number,
  settingsJson: string,
): ReplyRow {
  const r = o.ok ? o.result : undefined;
  return {
    item_id: item.item_id,
    campaign: src.campaign,
    phase: src.phase,
    model: src.model,
    language: src.language,
    attempt,
    status: r ? (isEmptyReply(r) ? 'empty' : 'ok') : 'error',
    text: r ? r.text : null,
    finish_reason: r ? r.finish_reason : null,
    input_tokens: r ? r.usage.input_tokens : 0,
    output_tokens: r ? r.usage.output_tokens : 0,
    cached_input_tokens: r?.usage.cached_input_tokens ?? null,
    // The whole usage, cached tokens included: they are priced at the cached-input price.
    cost_usd: r ? src.cost(r.usage) : 0,
    latency_ms: latencyMs,
    logprobs_json: r?.logprobs ? JSON.stringify(r.logprobs) : null,
    logprobs_exact: r?.logprobs ? Object.values(r.logprobs).every((l) => l.exact) : null,
    error_class: o.ok ? null : o.errorClass,
    error_message: o.ok ? null : o.message.slice(0, 500),
    settings_json: settingsJson,
    provider: src.providerId,
    simulated: src.simulated,
    created_at: now(),
  };
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
  await rm(part.journal.path, { force: true });
}

export function readingsOf(spec: PartitionSpec, byId: ReadonlyMap<string, PromptItem>, rows: readonly ReplyRow[]): ReadingRow[] {
  const out: ReadingRow[] = [];
  for (const row of rows) {
    if (row.status !== 'ok') continue;
    const item = byId.get(row.item_id);
    if (item) out.push(...spec.readReply(item, row));
  }
  return out;
}

/**
 * A part is named after the journal it is made from, whichever run makes it: a killed run may have
 * written the part file and died before the ledger commit, and the run that adopts the journal
 * must replace that file, not add a second copy of its replies beside it.
 */
export function partNameOf(journalPath: string): string {
  return `part-${basename(journalPath, '.ndjson')}.parquet`;
}

/**
 * Journals of a killed run hold replies that were paid for but never committed. They become a part
 * now: their items are marked done (or failed) and their cost is counted once, the dead run's
 * reservations having been released when this run started.
 */
export async function adoptJournals(spec: PartitionSpec, byId: ReadonlyMap<string, PromptItem>, replied: Set<string> = new Set()): Promise<number> {
  const journals = await listJournals(spec.journalDir);
  if (journals.length === 0) return 0;
  const committed = await spec.ledger.committedParts(spec.campaign, spec.phase);
  let adopted = 0;
  for (const path of journals) {
    const partName = partNameOf(path);
    // Killed after the ledger commit, before the journal was removed: its replies are counted.
    if (committed.has(spec.sink.partKey(partName))) {
      await rm(path, { force: true });
      continue;
    }
    // A batch's journal is rebuilt from the provider's results file by the run that re-attaches
    // to the batch (still open in the ledger): adopting it too would store its replies twice.
    if (basename(path).startsWith(BATCH_JOURNAL_PREFIX)) {
      await rm(path, { force: true });
      continue;
    }
    const rows = (await readJournal<ReplyRow>(path)).filter((r) => byId.has(r.item_id) && r.phase === spec.phase);
    // A call with a row in the journal came back: its cost is the row's, not a guess.
    for (const r of rows) replied.add(r.item_id);
    // Attempts at permanently failed items too: they were paid for, and are stored as data.
    const pending = await spec.ledger.pendingAmong(spec.campaign, ledgerPartition(spec), rows.map((r) => r.item_id), { retryFailed: true });
    const fresh = rows.filter((r) => pending.has(r.item_id));
    if (fresh.length === 0) {
      await rm(path, { force: true });
      continue;
    }
    // Items with only failed attempts in the journal stay pending and are asked again, unless the
    // last one failed permanently (the dead run would have recorded that): a refusal is paid once.
    const done = [...new Set(fresh.filter((r) => r.status === 'ok').map((r) => r.item_id))];
    const failedPermanently = permanentlyFailed(fresh, new Set(done));
    // Rewritten without a torn last line, which DuckDB's reader would reject. Through a rename, so
    // that a kill now leaves the old journal or the new one, never half of either.
    await writeFile(`${path}.tmp`, `${fresh.map((r) => JSON.stringify(r)).join('\n')}\n`);
    await rename(`${path}.tmp`, path);
    const repliesKey = await spec.sink.writeReplies(path, partName);
    await spec.sink.writeReadings(readingsOf(spec, byId, fresh), partName);
    await spec.ledger.commitPart({
      campaign: spec.campaign,
      ...ledgerPartition(spec),
      partKey: repliesKey,
      done,
      failed: [],
      failedPermanently,
      costUsd: fresh.reduce((s, r) => s + r.cost_usd, 0),
    });
    await rm(path, { force: true });
    adopted += done.length;
  }
  return adopted;
}

/**
 * Registers a partition's items and adopts the journals a killed run left. For a whole partition
 * (the local run) the registration retires ids the design dropped, and the killed run's held
 * reservations of the partition are resolved: the calls its journals show came back are counted
 * from the journal, the others (no reply, maybe billed) count as possibly billed.
 */
export async function registerAndAdopt(spec: PartitionSpec, byId: ReadonlyMap<string, PromptItem>): Promise<number> {
  const partition = ledgerPartition(spec);
  if (spec.wholePartition) await spec.ledger.registerPartition(spec.campaign, partition, [...byId.keys()]);
  else await spec.ledger.registerItems(spec.campaign, partition, [...byId.keys()]);
  const replied = new Set<string>();
  const adopted = await adoptJournals(spec, byId, replied);
  if (spec.wholePartition) {
    await spec.ledger.resolveOrphans(spec.campaign, partition, replied, (id) => {
      const item = byId.get(id);
      return item === undefined ? undefined : spec.maxCost(item);
    });
  }
  return adopted;
}

/** Items (not done) whose last journaled attempt failed with a permanent error class. */
export function permanentlyFailed(rows: readonly Pick<ReplyRow, "item_id" | "attempt" | "status" | "error_class">[], done: ReadonlySet<string>): string[] {
  const last = new Map<string, (typeof rows)[number]>();
  for (const r of rows) {
    const seen = last.get(r.item_id);
    if (!seen || r.attempt >= seen.attempt) last.set(r.item_id, r);
  }
  const out: string[] = [];
  for (const [id, r] of last) {
    if (done.has(id)) continue;
    if (r.status === 'empty' || (r.status === 'error' && r.error_class !== null && PERMANENT_ERROR_CLASSES.has(r.error_class))) out.push(id);
  }
  return out;
}
