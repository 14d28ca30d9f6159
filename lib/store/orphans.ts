/**
 * What both ledgers share about reservations a killed run left behind (Ledger.orphanStale and
 * resolveOrphans in types.ts), and the digest that tells a partition's items unchanged.
 */
import { createHash, type Hash } from 'node:crypto';

/**
 * The part of a dead run's reservation that may have been billed: the maximum cost of its calls
 * whose items are not in `replied`, the items whose calls the run's journal shows ended (those are
 * committed from the journal: replies at their cost, attempts sent and never answered at what they
 * reserved; lib/run/adoptJournals.ts). Without the ids, the whole amount; never more than the amount.
 */
export function orphanBill(amount: number, ids: readonly string[] | null, replied: ReadonlySet<string>, maxCostOf: (id: string) => number | undefined): number {
  if (ids === null || ids.length === 0) return amount;
  let billed = 0;
  for (const id of ids) {
    if (replied.has(id)) continue;
    // An item the design no longer has: its share of the reservation.
    billed += maxCostOf(id) ?? amount / ids.length;
  }
  return Math.min(amount, billed);
}

/** A digest of a partition's item ids in their order: equal when the design gives the same items. */
export function idsDigest(ids: readonly string[]): string {
  return addToIdsDigest(createHash('sha256'), ids).digest('hex');
}

/**
 * Adds ids to a digest as idsDigest counts them (each id, then a newline), so that ids given a
 * slice at a time, in order, digest as the whole list does.
 */
export function addToIdsDigest(hash: Hash, ids: readonly string[]): Hash {
  // One update over the joined ids: the same digest as an update per id, without a native call
  // per id (a full campaign registers a million).
  return ids.length === 0 ? hash : hash.update(`${ids.join('\n')}\n`);
}
