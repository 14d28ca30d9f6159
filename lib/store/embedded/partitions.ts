/**
 * The partitions of a campaign's current design on the embedded ledger (dynamo/partitions.ts is the
 * same concern on DynamoDB): the `partitions` table, each partition's size and a digest of its ids.
 * Registering a partition registers its ids (items.ts registerTx, with retired ids restored),
 * retires the ids the design no longer has, and records the digest; a digest equal to the recorded
 * one means nothing changed, and nothing is written.
 */
import type Database from 'better-sqlite3';
import { idsDigest } from '../orphans.js';
import type { LedgerPartition, PartitionRecord } from '../types.js';
import type { EmbeddedItems } from './items.js';

/**
 * Ids per transaction of `registerPartition`. Partition threads share the main thread's ledger:
 * registering a partition of 80,000 ids in one transaction (~0.3 s) held up every other thread's
 * calls, a chunk's reservation among them, and its calls stalled behind it.
 */
const REGISTER_SLICE = 10_000;

export class EmbeddedPartitions {
  private readonly items: EmbeddedItems;
  private readonly stmt;
  private readonly registerPartitionTx;

  constructor(db: Database.Database, items: EmbeddedItems) {
    this.items = items;
    const stmt = {
      partitionRow: db.prepare('SELECT items, digest FROM partitions WHERE campaign = ? AND phase = ? AND model = ? AND language = ?'),
      upsertPartition: db.prepare(
        `INSERT INTO partitions (campaign, phase, model, language, items, digest) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (campaign, phase, model, language) DO UPDATE SET items = excluded.items, digest = excluded.digest`,
      ),
      partitions: db.prepare('SELECT phase, model, language, items FROM partitions WHERE campaign = ? ORDER BY phase, model, language'),
      // Ids the partition no longer has: kept with their replies, left out of the counts.
      retireOthers: db.prepare(
        `UPDATE items SET retired = 1 WHERE pid = ? AND retired = 0
           AND item_id NOT IN (SELECT value FROM json_each(?))`,
      ),
    };
    this.stmt = stmt;

    this.registerPartitionTx = db.transaction((campaign: string, part: LedgerPartition, ids: readonly string[], digest: string, from: number): void => {
      const known = stmt.partitionRow.get(campaign, part.phase, part.model, part.language) as { items: number; digest: string } | undefined;
      // The same design as last time: every id is registered already.
      if (known?.digest === digest) return;
      items.registerTx(campaign, part, from === 0 ? ids : ids.slice(from), true);
      // Ids the partition has and the list lacks (the design changed, or registerItems wrote ids
      // of a slice): read through the key's partition prefix, a few ms per partition.
      stmt.retireOthers.run(items.numberOf(campaign, part), JSON.stringify(ids));
      stmt.upsertPartition.run(campaign, part.phase, part.model, part.language, ids.length, digest);
    });
  }

  /**
   * Registers a partition's ids a slice at a time, one transaction each, letting other calls run
   * between them; the last transaction retires the ids the list lacks and records the digest. A run
   * killed between slices recorded no digest: the next registers the partition again (ids already
   * registered keep their state).
   */
  async registerPartition(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    const digest = idsDigest(itemIds);
    const known = this.stmt.partitionRow.get(campaign, partition.phase, partition.model, partition.language) as { digest: string } | undefined;
    if (known?.digest === digest) return;
    let from = 0;
    for (; from + REGISTER_SLICE < itemIds.length; from += REGISTER_SLICE) {
      this.items.registerTx.immediate(campaign, partition, itemIds.slice(from, from + REGISTER_SLICE), true);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.registerPartitionTx.immediate(campaign, partition, itemIds, digest, from);
  }

  /** Records a partition whose ids are all registered already (Ledger.recordPartition). */
  recordPartition(campaign: string, partition: LedgerPartition, items: number, digest: string): void {
    this.stmt.upsertPartition.run(campaign, partition.phase, partition.model, partition.language, items, digest);
  }

  partitions(campaign: string): PartitionRecord[] {
    return this.stmt.partitions.all(campaign) as PartitionRecord[];
  }
}
