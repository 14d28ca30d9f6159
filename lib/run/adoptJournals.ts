/**
 * Journals turned into parts: the names a part takes from its journal, the readings of its rows,
 * and the adoption of the journals a killed run left (registerAndAdopt, which the runners call
 * before they ask anything). Separate from the runner because the Lambda worker's salvage and the
 * batch runner adopt journals too.
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { ReadingRow, ReplyRow } from '../store/types.js';
import { ledgerPartition } from '../store/types.js';
import { callEnded, permanentlyFailed } from './attemptVerdict.js';
import { listJournals, POSSIBLY_BILLED_FIELD, readJournal } from './Journal.js';
import type { PartitionSpec } from './partitionTypes.js';
import type { ItemLookup } from './slicedItems.js';

/** Journals of batch results are named `batch-<batch id>.ndjson` (lib/run/runBatchPartition.ts). */
export const BATCH_JOURNAL_PREFIX = 'batch-';

/** The readings of a part's successful rows (the spec's readReply), in row order. */
export function readingsOf(spec: PartitionSpec, byId: ItemLookup, rows: readonly ReplyRow[]): ReadingRow[] {
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

/** A journal line: a reply row, and what the attempt reserved when it was sent and never answered. */
type JournalRow = ReplyRow & { readonly [POSSIBLY_BILLED_FIELD]?: number };

/**
 * Journals of a killed run hold replies that were paid for but never committed. They become a part
 * now: their items are marked done (or failed) and their cost is counted once, the dead run's
 * reservations having been released when this run started.
 *
 * `ended`, when given, is the set the caller then resolves the dead run's orphaned reservations
 * with (Ledger.resolveOrphans): it receives the items whose calls the journal shows ended
 * (callEnded). The attempts of those items that were sent and never answered are counted here as
 * possibly billed, at what each reserved; those of items whose call may still have been on the wire
 * are left to their orphaned reservations, which count each attempt's reservation once (the first
 * attempt's chunk, each retry's own). Without `ended` (the Lambda worker's salvage, which counts
 * them itself, and its next invocation, whose plan bills the dead run's reservations whole) they
 * are not counted here: counting them twice would only take budget from the campaign.
 */
export async function adoptJournals(spec: PartitionSpec, byId: ItemLookup, ended?: Set<string>): Promise<number> {
  const journals = await listJournals(spec.journalDir);
  if (journals.length === 0) return 0;
  const committed = await spec.ledger.committedParts(spec.campaign, spec.phase);
  let adopted = 0;
  for (const path of journals) {
    const partName = partNameOf(path);
    // Killed after the ledger commit, before the journal was removed: its replies are counted,
    // and its parts may still wait in staging.
    if (committed.has(spec.sink.partKey(partName))) {
      await spec.sink.publish?.(partName);
      await rm(path, { force: true });
      continue;
    }
    // A batch's journal is rebuilt from the provider's results file by the run that re-attaches
    // to the batch (still open in the ledger): adopting it too would store its replies twice.
    if (basename(path).startsWith(BATCH_JOURNAL_PREFIX)) {
      await rm(path, { force: true });
      continue;
    }
    const lines = (await readJournal<JournalRow>(path)).filter((r) => byId.has(r.item_id) && r.phase === spec.phase);
    // A call the journal shows ended came back: its cost is its rows', not a guess.
    const endedHere = endedCalls(lines, spec.retry.maxAttempts);
    for (const id of endedHere) ended?.add(id);
    const rows = lines.map(replyOf);
    // Attempts at permanently failed items too: they were paid for, and are stored as data.
    const pending = await spec.ledger.pendingAmong(spec.campaign, ledgerPartition(spec), rows.map((r) => r.item_id), { retryFailed: true });
    const fresh = rows.filter((r) => pending.has(r.item_id));
    const possiblyBilledUsd =
      ended === undefined ? 0 : lines.reduce((sum, r) => sum + (pending.has(r.item_id) && endedHere.has(r.item_id) ? (r[POSSIBLY_BILLED_FIELD] ?? 0) : 0), 0);
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
      ...(possiblyBilledUsd > 0 ? { possiblyBilledUsd } : {}),
    });
    await spec.sink.publish?.(partName);
    await rm(path, { force: true });
    adopted += done.length;
  }
  return adopted;
}

/**
 * Registers a partition's items and adopts the journals a killed run left. For a whole partition
 * (the local run) the registration retires ids the design dropped, and the killed run's held
 * reservations of the partition are resolved: the calls its journals show ended are counted from
 * the journal (an attempt sent and never answered at what it reserved), the others (no reply, or a
 * retry maybe on the wire at the kill, maybe billed) count as possibly billed at their reservations.
 * `byId` may say an item's maximum cost itself (`maxCostOf`: a partition asked in slices keeps
 * the costs, not the items).
 */
export async function registerAndAdopt(spec: PartitionSpec, byId: ItemLookup & { maxCostOf?(id: string): number | undefined }): Promise<number> {
  const partition = ledgerPartition(spec);
  if (!spec.wholePartition) {
    await spec.ledger.registerItems(spec.campaign, partition, [...byId.keys()]);
    return adoptJournals(spec, byId);
  }
  await spec.ledger.registerPartition(spec.campaign, partition, [...byId.keys()]);
  const ended = new Set<string>();
  const adopted = await adoptJournals(spec, byId, ended);
  await spec.ledger.resolveOrphans(spec.campaign, partition, ended, (id) => {
    if (byId.maxCostOf) return byId.maxCostOf(id);
    const item = byId.get(id);
    return item === undefined ? undefined : spec.maxCost(item);
  });
  return adopted;
}

/** The items whose last journaled attempt ended their call (callEnded). */
function endedCalls(lines: readonly JournalRow[], maxAttempts: number): Set<string> {
  const last = new Map<string, JournalRow>();
  for (const r of lines) {
    const seen = last.get(r.item_id);
    if (!seen || r.attempt >= seen.attempt) last.set(r.item_id, r);
  }
  const out = new Set<string>();
  for (const [id, r] of last) if (callEnded(r, r[POSSIBLY_BILLED_FIELD] !== undefined, maxAttempts)) out.add(id);
  return out;
}

/** The stored reply of a journal line: without the journal-only field, which is no column of the replies. */
function replyOf(line: JournalRow): ReplyRow {
  if (line[POSSIBLY_BILLED_FIELD] === undefined) return line;
  const { [POSSIBLY_BILLED_FIELD]: _billed, ...row } = line;
  return row;
}
