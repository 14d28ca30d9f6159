/**
 * Where the DynamoDB ledger keeps things: the key of every kind of row (the table map is in
 * DynamoLedger.ts's header), and the spread of a phase's item rows over ITEM_SHARDS keys. One file
 * so that a key is built the same way by every concern that reads or writes it (items.ts writes
 * `PART#` rows that budget.ts never reads, budget.ts reads `BATCH#` rows that batches.ts writes).
 */
import type { Key } from './context.js';

export const budgetKey = (campaign: string): Key => ({ pk: campaign, sk: 'BUDGET' });
export const reservationKey = (campaign: string, id: string): Key => ({ pk: campaign, sk: `RES#${id}` });
/**
 * Item rows of one phase spread over this many partition keys, `ITEM#<c>#<phase>#00` … `#15`, the
 * shard a hash of the item id. DynamoDB serves one partition key at most 1,000 write units (and
 * 3,000 read units) a second before it splits the partition for heat, which takes minutes: with
 * every item of a phase under one key, registration (~1M items at full size) and the commits of
 * 100 workers all queued behind those 1,000 WCU/s. 16 keys give 16,000 WCU/s from the first write,
 * above what the 100 worker copies and the plan's 32 registration requests in flight write
 * (~10,000 item writes a second), while a query of a phase's items (counts, pendingItems,
 * registerPartition) stays 16 Queries in parallel. Point reads and writes name their one key.
 */
export const ITEM_SHARDS = 16;

/** The item's shard: FNV-1a (32 bits) of its id, modulo ITEM_SHARDS. Stable: it is part of the stored key. */
export function itemShard(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % ITEM_SHARDS;
}

export const shardPk = (campaign: string, phase: string, shard: number): string => `ITEM#${campaign}#${phase}#${String(shard).padStart(2, '0')}`;
export const itemPk = (campaign: string, phase: string, id: string): string => shardPk(campaign, phase, itemShard(id));
/** The one key every item of a phase had before ITEM_SHARDS: a ledger holding it is refused (assertItemLayout). */
export const legacyItemPk = (campaign: string, phase: string): string => `ITEM#${campaign}#${phase}`;
export const partPk = (campaign: string, phase: string): string => `PART#${campaign}#${phase}`;
export const batchPk = (campaign: string): string => `BATCH#${campaign}`;
export const partitionPk = (campaign: string): string => `PARTITION#${campaign}`;
/** Sort-key prefix of a batch intent under `BATCH#<c>`. */
export const INTENT_PREFIX = 'INTENT#';
