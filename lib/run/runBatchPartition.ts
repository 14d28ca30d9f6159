import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { PromptItem } from '../core/types.js';
import type { BatchClient, BatchHandle, BatchItemResult, BatchLookupResult, BatchRequest } from '../providers/batchTypes.js';
import type { BatchIntent, BatchRecord, ReplyRow } from '../store/types.js';
import { ledgerPartition } from '../store/types.js';
import { costUsd } from '../pricing/pricing.js';
import { backoffMs } from './callWithRetry.js';
import { itemMaxCost } from './cost.js';
import { Journal } from './Journal.js';
import { BATCH_JOURNAL_PREFIX, partNameOf, readingsOf, registerAndAdopt } from './adoptJournals.js';
import { KEY_ERROR_CLASSES } from './attemptVerdict.js';
import type { PartitionOutcome, PartitionSpec, SyncRemainder } from './partitionTypes.js';
import { replyRow, type ReplySource } from './replyRow.js';
import { runPartition } from './runPartition.js';
import { sleep } from './sleep.js';

/** How often a partition that the cap holds back looks whether other partitions have settled. */
const RESERVED_POLL_MS = 50;

export interface BatchPartitionSpec extends PartitionSpec {
  /** A batch is submitted from the whole partition's items: a batch partition is not asked in slices. */
  readonly items: readonly PromptItem[];
  readonly batch: BatchClient;
  /** Wait between two rounds of polling the partition's open batches. */
  readonly pollMs: number;
  /** At most this many requests per batch, below the provider's own limits (tests of splitting). */
  readonly maxBatchRequests?: number;
  /** Called after a batch is submitted and recorded in the ledger (tests of a killed run). */
  readonly onBatchSubmitted?: (record: BatchRecord) => void;
  /**
   * Return after one round (submit what is pending, poll each open batch once) instead of sleeping
   * until every batch has ended: the Lambda worker, which the state machine invokes again after a
   * Wait (functions/worker).
   */
  readonly once?: boolean;
  /** The clock of submission intents (ms since the epoch); tests move it. */
  readonly now?: () => number;
}

interface OpenBatch {
  readonly record: BatchRecord;
  readonly handle: BatchHandle;
}

/**
 * Runs the pending items of one partition through the provider's batch API ("Provider
 * Batch APIs"): reserve the batch's whole maximum cost at the batch price, submit, write the batch
 * to the ledger, poll until it has ended, and store its results as one part through the same
 * journal → Parquet → ledger-commit path as the synchronous run, the commit settling the
 * reservation and closing the batch in one transaction. Requests that expired, were cancelled or
 * failed transiently stay pending and go into the next batch, up to `retry.maxAttempts` batches
 * per item in one run, except those of a batch `sondage stop` cancelled while this run held it,
 * which wait for the next run. A run that starts with open batches in the ledger (a killed run's,
 * or cancelled ones) re-attaches to them instead of submitting their requests again, and with
 * submission intents looks their batches up first (a batch created but never recorded).
 */
export async function runBatchPartition(spec: BatchPartitionSpec): Promise<PartitionOutcome> {
  const { ledger, campaign, phase, model, language, batch } = spec;
  const byId = new Map(spec.items.map((i) => [i.item_id, i]));
  const adopted = await registerAndAdopt(spec, byId);

  const out: RunTally = { done: 0, failed: 0, costUsd: 0, blocked: 0 };
  const attempts = new Map<string, number>();
  // Items settled in this run (done, or failed for good): never submitted again by it.
  const finished = new Set<string>();
  const open: OpenBatch[] = (await ledger.openBatches(campaign, phase, model, language)).map((record) => ({
    record,
    handle: JSON.parse(record.handleJson) as BatchHandle,
  }));
  for (const b of open) for (const id of b.handle.customIds) attempts.set(id, (attempts.get(id) ?? 0) + 1);
  // A killed run's batches that may exist at the provider without a record: looked up, not resubmitted.
  const intents: BatchIntent[] = (await ledger.batchIntents(campaign, phase, model, language)).filter((i) => i.provider === batch.id);
  const state: SubmitState = { open, intents, attempts, finished, deferred: new Set(), out };
  const initiallyPending = (await ledger.pendingAmong(campaign, ledgerPartition(spec), [...byId.keys()], { retryFailed: spec.retryFailed === true })).size;
  let seq = 0;

  while (!spec.stop.reason) {
    if (spec.signal?.aborted) {
      spec.stop.reason = 'aborted';
      break;
    }
    const resolved = await resolveIntents(spec, state);
    const submitted = (await submitPending(spec, byId, state, () => seq++)) || resolved;
    if (open.length === 0 && intents.length === 0) break;
    let closed = 0;
    for (const b of [...open]) {
      if (spec.signal?.aborted) break;
      const results = await endedResults(batch, b.handle, spec.signal);
      if (results === undefined) continue;
      // Cancelled by `sondage stop` while this run held it: what never ran waits for the next run.
      const stopped = b.record.cancelledAt === undefined && (await ledger.openBatches(campaign, phase, model, language)).some((r) => r.batchId === b.record.batchId && r.cancelledAt !== undefined);
      await collect(spec, byId, b, results, attempts, finished, out);
      if (stopped) for (const id of b.handle.customIds) if (!finished.has(id)) state.deferred.add(id);
      open.splice(open.indexOf(b), 1);
      closed++;
    }
    if (closed === 0 && !submitted) {
      if (spec.once) break;
      await sleep(spec.pollMs, spec.signal);
    }
  }
  const { blocked, keyFailure, keyBlocked, waitStop, waitBlocked, syncRemainder, ...counts } = out;
  return {
    ...counts,
    ...(syncRemainder !== undefined ? { syncRemainder } : {}),
    adopted,
    pending: Math.max(0, initiallyPending - out.done - out.failed - blocked),
    ...(keyFailure !== undefined ? { keyFailure, keyBlocked } : {}),
    ...(waitStop !== undefined ? { waitStop, waitBlocked } : {}),
  };
}

/** What one run of a partition has settled, batches and synchronous remainders together. */
interface RunTally {
  done: number;
  failed: number;
  costUsd: number;
  /** Items the synchronous remainder left pending behind a rejected key or a too-long wait. */
  blocked: number;
  keyFailure?: string;
  keyBlocked?: number;
  waitStop?: string;
  waitBlocked?: number;
  /** Items handed to the synchronous route for want of a batch's minimum. */
  syncRemainder?: SyncRemainder;
}

/** What the submission side of a partition tracks within one run. */
interface SubmitState {
  readonly open: OpenBatch[];
  /** Submission intents not yet resolved: their items are held, as an open batch's are. */
  readonly intents: BatchIntent[];
  readonly attempts: Map<string, number>;
  /** Items settled in this run (done, or failed for good): never submitted again by it. */
  readonly finished: ReadonlySet<string>;
  /** Items whose batch could not be created within the retry policy: left pending for a later run. */
  readonly deferred: Set<string>;
  readonly out: RunTally;
}

/**
 * The key a batch is tagged with at creation: deterministic from
 * the intent it is written in, and unique to it (the reservation id names the run and a sequence
 * number), so that a batch re-queued with the same requests is never mistaken for an earlier one.
 */
export function submissionKey(campaign: string, phase: string, model: string, language: string, reservationId: string, customIds: readonly string[]): string {
  const digest = createHash('sha256').update(JSON.stringify([campaign, phase, model, language, reservationId, customIds])).digest('hex');
  return `sondage-${digest.slice(0, 32)}`;
}

/**
 * Looks up the batches of unresolved intents (a killed run's, or a creation that failed in a way
 * that may have created the batch anyway): a batch found is recorded (which resolves the intent)
 * and polled like any other; one never created has its intent dropped and its reservation
 * released, so its items go into the next batch; an undetermined one is asked again next round,
 * as is one whose lookup failed transiently. Returns whether any resolved.
 */
async function resolveIntents(spec: BatchPartitionSpec, state: SubmitState): Promise<boolean> {
  let any = false;
  for (const intent of [...state.intents]) {
    const found = await lookUp(spec.batch, intent, state.open, spec.signal);
    if (found === undefined || found.status === 'undetermined') continue;
    state.intents.splice(state.intents.indexOf(intent), 1);
    any = true;
    if (found.status === 'absent') {
      await spec.ledger.dropBatchIntent(spec.campaign, intent.submissionKey);
      continue;
    }
    await adopt(spec, state, intent, found.handle);
  }
  return any;
}

/** `batch.find` for an intent; undefined when the lookup failed in a way a later one can get past. */
async function lookUp(batch: BatchClient, intent: BatchIntent, open: readonly OpenBatch[], signal?: AbortSignal): Promise<BatchLookupResult | undefined> {
  try {
    const exclude = new Set(open.map((b) => b.handle.batchId));
    return await batch.find({ submissionKey: intent.submissionKey, customIds: intent.customIds, createdAt: intent.createdAt, exclude }, signal);
  } catch (err) {
    if (signal?.aborted || (err as { retryable?: unknown }).retryable === true) return undefined;
    throw err;
  }
}

/** Records a created batch in the ledger (resolving its intent in the same write) and starts polling it. */
async function adopt(spec: BatchPartitionSpec, state: SubmitState, intent: BatchIntent, handle: BatchHandle): Promise<void> {
  const record: BatchRecord = {
    campaign: spec.campaign,
    phase: spec.phase,
    model: spec.model,
    language: spec.language,
    batchId: handle.batchId,
    handleJson: JSON.stringify(handle),
    reservationId: intent.reservationId,
    submissionKey: intent.submissionKey,
  };
  await spec.ledger.recordBatch(record);
  state.open.push({ record, handle });
  for (const id of handle.customIds) state.attempts.set(id, (state.attempts.get(id) ?? 0) + 1);
  spec.onBatchSubmitted?.(record);
}

/**
 * Submits the partition's pending items that no open batch or intent holds, in batches within the
 * limits, each after reserving its maximum cost and recording a submission intent. Near the cap a
 * batch is halved until it fits; when not even one request fits, it waits for this partition's
 * open batches (or other partitions' reservations) to settle, and stops the run on the budget when
 * nothing can settle any more. Returns whether anything was submitted.
 */
async function submitPending(spec: BatchPartitionSpec, byId: ReadonlyMap<string, PromptItem>, state: SubmitState, nextSeq: () => number): Promise<boolean> {
  const { ledger, campaign, phase, batch } = spec;
  const held = new Set([...state.open.flatMap((b) => b.handle.customIds), ...state.intents.flatMap((i) => i.customIds)]);
  const pending = await ledger.pendingAmong(campaign, ledgerPartition(spec), [...byId.keys()], { retryFailed: spec.retryFailed === true });
  const requests: BatchRequest[] = [];
  for (const id of pending) {
    const item = byId.get(id);
    if (!item || held.has(id) || state.finished.has(id) || state.deferred.has(id)) continue;
    requests.push({ customId: id, request: { messages: item.messages, settings: item.settings, item } });
  }
  if (requests.length === 0) return false;
  const groups = batch.split(requests).flatMap((g) => chunks(g, spec.maxBatchRequests ?? g.length));
  // A provider with a minimum per batch (Bedrock: 100 records) refuses a smaller one: those items are asked synchronously.
  const min = batch.limits.minRequests ?? 0;
  const queue = groups.filter((g) => g.length >= min);
  const small = groups.filter((g) => g.length < min).flat();
  let any = false;
  if (small.length > 0) {
    await askSynchronously(spec, small.map((r) => byId.get(r.customId)!), state, nextSeq());
    any = true;
  }
  while (queue.length > 0) {
    if (spec.signal?.aborted || spec.stop.reason) break;
    const group = queue.shift()!;
    const amount = group.reduce((sum, r) => sum + spec.maxCost(byId.get(r.customId)!), 0);
    const reservationId = `${spec.runId}:batch:${phase}:${spec.model}:${spec.language}:${nextSeq()}`;
    if (!(await ledger.reserve(campaign, reservationId, amount, { phase, model: spec.model, language: spec.language, itemIds: group.map((r) => r.customId) }))) {
      if (group.length > 1) {
        const half = Math.ceil(group.length / 2);
        queue.unshift(group.slice(0, half), group.slice(half));
        continue;
      }
      // One request does not fit: what this partition has in flight settles when its batches end.
      if (state.open.length > 0 || state.intents.length > 0) break;
      if ((await ledger.budget(campaign)).reserved_usd > 0) {
        await sleep(RESERVED_POLL_MS, spec.signal);
        queue.unshift(group);
        continue;
      }
      spec.stop.reason = 'budget';
      break;
    }
    const customIds = group.map((r) => r.customId);
    const intent: BatchIntent = {
      campaign,
      phase,
      model: spec.model,
      language: spec.language,
      provider: batch.id,
      submissionKey: submissionKey(campaign, phase, spec.model, spec.language, reservationId, customIds),
      customIds,
      reservationId,
      createdAt: (spec.now ?? Date.now)(),
    };
    await ledger.recordBatchIntent(intent);
    const handle = await create(spec, state, intent, group);
    if (handle === undefined) continue;
    await adopt(spec, state, intent, handle);
    any = true;
  }
  return any;
}

/**
 * Asks `items` through the model's synchronous route (runPartition, the same provider's direct
 * call: Converse for Bedrock) because they are fewer than one batch may hold: reserved and settled
 * at the synchronous price (no batch discount applies), chunk by chunk, under the same
 * exactly-once commit as any synchronous call. Whatever they end as, this run asks them no more:
 * runPartition has already retried them under the run's policy.
 */
async function askSynchronously(spec: BatchPartitionSpec, items: readonly PromptItem[], state: SubmitState, seq: number): Promise<void> {
  const ran = await runPartition({
    ...spec,
    // Its own journals, parts and reservation ids: a later remainder of this run must not reuse them.
    runId: `${spec.runId}-sync${seq}`,
    items,
    // Only a part of the partition: the batch run registered the whole of it.
    wholePartition: false,
    maxCost: (item) => itemMaxCost(item, spec.price),
    cost: (usage) => costUsd(spec.price, usage),
  });
  for (const item of items) state.deferred.add(item.item_id);
  const { out } = state;
  out.syncRemainder = { items: (out.syncRemainder?.items ?? 0) + items.length, minRequests: spec.batch.limits.minRequests ?? 0 };
  out.done += ran.done;
  out.failed += ran.failed;
  out.costUsd += ran.costUsd;
  out.blocked += (ran.keyBlocked ?? 0) + (ran.waitBlocked ?? 0);
  if (ran.keyFailure !== undefined) {
    out.keyFailure = ran.keyFailure;
    out.keyBlocked = (out.keyBlocked ?? 0) + (ran.keyBlocked ?? 0);
  }
  if (ran.waitStop !== undefined) {
    out.waitStop = ran.waitStop;
    out.waitBlocked = (out.waitBlocked ?? 0) + (ran.waitBlocked ?? 0);
  }
}

/**
 * Creates the batch of a recorded intent. A transient failure (429, 5xx, a dropped connection) is
 * retried under the run's retry policy, as a call is; since the failed attempt may have created
 * the batch all the same, each retry first looks it up by the intent. Returns undefined when the
 * batch is left to a later lookup (the run stopped, or the lookup could not tell yet) or was given
 * up for this run (its intent dropped, its items deferred to a later run). A permanent failure
 * drops the intent (releasing its reservation) and throws.
 */
async function create(spec: BatchPartitionSpec, state: SubmitState, intent: BatchIntent, group: readonly BatchRequest[]): Promise<BatchHandle | undefined> {
  const leave = (): undefined => {
    state.intents.push(intent);
    return undefined;
  };
  for (let attempt = 1; ; attempt++) {
    try {
      // Not aborted with the run: a submission cut off after the provider created the batch
      // would leave it to the next run's lookup, a slower way to the same place.
      return await spec.batch.submit(group, undefined, intent.submissionKey);
    } catch (err) {
      if ((err as { retryable?: unknown }).retryable !== true) {
        await spec.ledger.dropBatchIntent(spec.campaign, intent.submissionKey);
        throw err;
      }
      if (spec.signal?.aborted) return leave();
      if (attempt < spec.retry.maxAttempts) await sleep(backoffMs(spec.retry, attempt, (err as { retryAfterMs?: number }).retryAfterMs), spec.signal);
      if (spec.signal?.aborted) return leave();
      const found = await lookUp(spec.batch, intent, state.open, spec.signal);
      if (found === undefined || found.status === 'undetermined') return leave();
      if (found.status === 'found') return found.handle;
      if (attempt >= spec.retry.maxAttempts) {
        await spec.ledger.dropBatchIntent(spec.campaign, intent.submissionKey);
        for (const id of intent.customIds) state.deferred.add(id);
        return undefined;
      }
    }
  }
}

/**
 * The batch's results once it has ended; undefined while it runs, or when a poll or the results
 * download failed in a way a later poll can get past (a transient error, a torn results file).
 * A batch the provider answers 404 for (deleted, or past its retention) is lost: every request
 * comes back as a retryable `batch_lost`, so its items are re-queued rather than blocking the
 * partition on every restart.
 */
async function endedResults(batch: BatchClient, handle: BatchHandle, signal?: AbortSignal): Promise<BatchItemResult[] | undefined> {
  try {
    const state = await batch.poll(handle, signal);
    if (!state.done) return undefined;
    return await batch.results(handle, signal);
  } catch (err) {
    if (signal?.aborted || (err as { retryable?: unknown }).retryable === true) return undefined;
    if ((err as { errorClass?: unknown }).errorClass === 'not_found') {
      const message = `batch ${handle.batchId} is unknown to the provider: ${err instanceof Error ? err.message : String(err)}`;
      return handle.customIds.map((customId) => ({ customId, ok: false, errorClass: 'batch_lost', message, retryable: true }));
    }
    throw err;
  }
}

/**
 * Stores a batch's results as one part, at the batch price: an ok result marks its item done, a
 * permanent error (or the last allowed attempt) marks it failed, and anything else leaves it
 * pending for the next batch. Results for items no longer pending (done by another run meanwhile)
 * are dropped, so nothing is counted twice. The commit settles the batch's reservation and closes
 * the batch in the ledger.
 */
async function collect(
  spec: BatchPartitionSpec,
  byId: ReadonlyMap<string, PromptItem>,
  b: OpenBatch,
  results: readonly BatchItemResult[],
  attempts: ReadonlyMap<string, number>,
  finished: Set<string>,
  out: { done: number; failed: number; costUsd: number },
): Promise<void> {
  // Every result of an item not yet done is stored, even one a --retry-failed run re-asked.
  const pending = await spec.ledger.pendingAmong(
    spec.campaign,
    ledgerPartition(spec),
    results.map((r) => r.customId),
    { retryFailed: true },
  );
  const journal = await Journal.open(spec.journalDir, `${BATCH_JOURNAL_PREFIX}${b.record.batchId.replace(/[^A-Za-z0-9_-]/g, '_')}.ndjson`);
  const source: ReplySource = { ...spec, providerId: spec.batch.id, simulated: false };
  const rows: ReplyRow[] = [];
  const done: string[] = [];
  const failed: string[] = [];
  // Refusals, content filters, bad requests: not asked again by a resume (runPartition's rule).
  const failedPermanently: string[] = [];
  for (const r of results) {
    const item = byId.get(r.customId);
    if (!item || !pending.has(r.customId)) continue;
    const attempt = attempts.get(r.customId) ?? 1;
    // A batch request has no latency of its own (the provider schedules it within a day); spec.cost
    // prices at the batch price (runCampaign passes the batch discount).
    const settings = JSON.stringify(spec.batch.settingsSent({ messages: item.messages, settings: item.settings }));
    const row = replyRow(source, item, r, attempt, 0, settings);
    journal.append(row);
    rows.push(row);
    spec.onReply?.(row);
    if (row.status === 'empty') failedPermanently.push(r.customId);
    else if (r.ok) done.push(r.customId);
    else if (!r.retryable && !KEY_ERROR_CLASSES.has(r.errorClass)) failedPermanently.push(r.customId);
    else if (!r.retryable || attempt >= spec.retry.maxAttempts) failed.push(r.customId);
  }
  await journal.close();
  const cost = rows.reduce((s, r) => s + r.cost_usd, 0);
  const partKey = spec.sink.partKey(partNameOf(journal.path));
  if (rows.length > 0) {
    await spec.sink.writeReplies(journal.path, partNameOf(journal.path));
    await spec.sink.writeReadings(readingsOf(spec, byId, rows), partNameOf(journal.path));
  }
  await spec.ledger.commitPart({
    campaign: spec.campaign,
    ...ledgerPartition(spec),
    partKey,
    done,
    failed,
    failedPermanently,
    reservationIds: [b.record.reservationId],
    costUsd: cost,
    closeBatches: [b.record.batchId],
  });
  await spec.sink.publish?.(partNameOf(journal.path));
  await rm(journal.path, { force: true });
  for (const id of [...done, ...failed, ...failedPermanently]) finished.add(id);
  out.done += done.length;
  out.failed += failed.length + failedPermanently.length;
  out.costUsd += cost;
}


function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += Math.max(1, size)) out.push(items.slice(i, i + Math.max(1, size)));
  return out;
}
