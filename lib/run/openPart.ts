/**
 * A part of a synchronous partition in the making (runPartition.ts): the journal its chunks append
 * to, what its commit will record, and the commit itself (Parquet + one ledger transaction that
 * settles its reservations at the rows' cost).
 */
import { rm } from 'node:fs/promises';
import type { PromptItem } from '../core/types.js';
import type { ReplyRow } from '../store/types.js';
import { ledgerPartition } from '../store/types.js';
import { partNameOf, readingsOf } from './adoptJournals.js';
import { Journal } from './Journal.js';
import type { PartitionSpec } from './partitionTypes.js';

export interface OpenPart {
  readonly seq: number;
  readonly journal: Journal;
  readonly rows: ReplyRow[];
  /**
   * The items of its rows, which its readings are read with at commit: the items themselves, not
   * the whole partition's (a partition asked in slices holds only the slices in flight).
   */
  readonly items: Map<string, PromptItem>;
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
    items: new Map(),
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
  await spec.sink.writeReadings(readingsOf(spec, part.items, part.rows), partName);
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
