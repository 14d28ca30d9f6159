/**
 * Journals turned into parts: the names a part takes from its journal, the readings of its rows,
 * and the adoption of the journals a killed run left (registerAndAdopt, which the runners call
 * before they ask anything). Separate from the runner because the Lambda worker's salvage and the
 * batch runner adopt journals too.
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { PromptItem } from '../core/types.js';
import type { ReadingRow, ReplyRow } from '../store/types.js';
import { ledgerPartition } from '../store/types.js';
import { permanentlyFailed } from './attemptVerdict.js';
import { listJournals, readJournal } from './Journal.js';
import type { PartitionSpec } from './partitionTypes.js';

/** Journals of batch results are named `batch-<batch id>.ndjson` (lib/run/runBatchPartition.ts). */
export const BATCH_JOURNAL_PREFIX = 'batch-';

/** The readings of a part's successful rows (the spec's readReply), in row order. */
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
    await spec.sink.publish?.(partName);
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
