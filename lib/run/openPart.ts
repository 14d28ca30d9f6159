/**
 * A part of a synchronous partition in the making (runPartition.ts): the journal its chunks append
 * to, what its commit will record, and the commit itself (Parquet + one ledger transaction that
 * settles its reservations at the rows' cost).
 */
import { rm } from 'node:fs/promises';
import type { ReadingRow, ReplyRow } from '../store/types.js';
import { ledgerPartition } from '../store/types.js';
import { partNameOf } from './adoptJournals.js';
import { Journal } from './Journal.js';
import type { PartitionSpec } from './partitionTypes.js';

export interface OpenPart {
  readonly seq: number;
  readonly journal: Journal;
  readonly rows: ReplyRow[];
  /**
   * The readings of its successful rows, read as each row is recorded: a part held its rows' items
   * until its commit to read them then, up to `partRows` items with their prompts (at three times
   * FAR-6's full design, judge prompts of ~5 KB each), where a reading is a few short strings.
   */
  readonly readings: ReadingRow[];
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

/** Opens part `seq` of the partition, its journal created synchronously (see PartitionRun.seal). */
export function openPartSync(spec: PartitionSpec, seq: number): OpenPart {
  return {
    seq,
    journal: Journal.openSync(spec.journalDir, `${spec.runId}-${spec.phase}-${String(seq).padStart(5, '0')}.ndjson`),
    rows: [],
    readings: [],
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
}

/** Writes the part's replies and readings, commits them with their spend, and removes the journal. */
export async function commitOpenPart(spec: PartitionSpec, part: OpenPart): Promise<void> {
  await part.journal.close();
  if (part.rows.length === 0) {
    // Nothing was asked (all chunks aborted): hand the reservations back.
    for (const r of part.reservations) await spec.ledger.release(spec.campaign, r);
    await rm(part.journal.path, { force: true });
    return;
  }
  const partName = partNameOf(part.journal.path);
  const repliesKey = await spec.sink.writeReplies(part.journal.path, partName, part.rows);
  await spec.sink.writeReadings(part.readings, partName);
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
