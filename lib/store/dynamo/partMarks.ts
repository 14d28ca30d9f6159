/**
 * Item marks of a committed part that cannot be lost (DynamoLedger.commitPart).
 *
 * A part's commit is one transaction (part record, spend, settled reservations), but its items,
 * up to a part's 20,000, cannot be marked done in it: a transaction holds 100 actions. Marked one
 * UpdateItem at a time afterwards, a throttle past the SDK's retries or a killed Lambda between
 * the transaction and the last mark left the rest pending, and they were asked, and paid for,
 * again. So the marks are written down before the transaction, in chunks under
 * `MARKS#<c>#<phase>` / `<part key>#<n>`, and the transaction itself puts a sparse row
 * `UNMARKED#<c>#<phase>` / `<part key>` naming how many chunks it has; the row goes once every mark
 * is made. Whoever reads a phase's pending items first replays the marks of every row still there
 * (`unmarkedParts` + `readMarks`), so a part committed is a part whose items are done, whatever
 * died in between. Chunks of a commit that never happened are never read (no row names them) and
 * expire with the table's TTL.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '../../config/index.js';
import { SondageError } from '../../errors.js';
import { queryPages } from './context.js';
import type { TxItem } from './context.js';

/** Item ids per chunk: 2,000 ids of 32 hex characters are ~70 KB of JSON, well below DynamoDB's 400 KB an item. */
export const MARK_CHUNK_IDS = 2_000;
/** Chunks expire this long after they are written (a replay needs them only until the next read of the phase). */
const MARK_CHUNK_TTL_S = 30 * 24 * 3600;

/** The items a part marks, as its commit names them. */
export interface PartMarks {
  readonly done: readonly string[];
  readonly failed: readonly string[];
  readonly failedPermanently: readonly string[];
}

const marksPk = (campaign: string, phase: string): string => `MARKS#${campaign}#${phase}`;
const unmarkedPk = (campaign: string, phase: string): string => `UNMARKED#${campaign}#${phase}`;
const chunkSk = (partKey: string, n: number): string => `${partKey}#${String(n).padStart(5, '0')}`;

/**
 * Writes a part's marks in chunks (before its commit transaction); returns how many chunks. A
 * commit tried again writes them again, over the same keys.
 */
export async function writeMarkChunks(db: DynamoDBDocumentClient, table: string, campaign: string, phase: string, partKey: string, marks: PartMarks): Promise<number> {
  const all: { id: string; s: 'd' | 'f' | 'p' }[] = [
    ...marks.done.map((id) => ({ id, s: 'd' as const })),
    ...marks.failed.map((id) => ({ id, s: 'f' as const })),
    ...marks.failedPermanently.map((id) => ({ id, s: 'p' as const })),
  ];
  const expires = Math.floor(Date.now() / 1000) + MARK_CHUNK_TTL_S;
  const chunks: Record<string, unknown>[] = [];
  for (let i = 0; i < all.length; i += MARK_CHUNK_IDS) {
    const slice = all.slice(i, i + MARK_CHUNK_IDS);
    const of = (s: 'd' | 'f' | 'p') => JSON.stringify(slice.filter((m) => m.s === s).map((m) => m.id));
    chunks.push({ pk: marksPk(campaign, phase), sk: chunkSk(partKey, chunks.length), done_json: of('d'), failed_json: of('f'), permanent_json: of('p'), [TTL_ATTRIBUTE]: expires });
  }
  // One PutItem each (a part has a few chunks): BatchWriteItem stays registration's alone.
  await Promise.all(chunks.map((Item) => db.send(new PutCommand({ TableName: table, Item }))));
  return chunks.length;
}

/** The transaction action that records a committed part as not yet marked. */
export function unmarkedPut(table: string, campaign: string, phase: string, partKey: string, chunks: number): TxItem {
  return { Put: { TableName: table, Item: { pk: unmarkedPk(campaign, phase), sk: partKey, chunks } } };
}

/** Parts of a phase committed and not yet (known to be) marked: part key and chunk count. */
export async function unmarkedParts(db: DynamoDBDocumentClient, table: string, campaign: string, phase: string): Promise<{ partKey: string; chunks: number }[]> {
  const rows = await queryPages(db, { TableName: table, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': unmarkedPk(campaign, phase) }, ConsistentRead: true });
  return rows.map((r) => ({ partKey: r.sk as string, chunks: r.chunks as number }));
}

/** The marks of a committed part, read back from its chunks. */
export async function readMarks(db: DynamoDBDocumentClient, table: string, campaign: string, phase: string, partKey: string, chunks: number): Promise<PartMarks> {
  const done: string[] = [];
  const failed: string[] = [];
  const failedPermanently: string[] = [];
  for (let n = 0; n < chunks; n++) {
    const out = await db.send(new GetCommand({ TableName: table, Key: { pk: marksPk(campaign, phase), sk: chunkSk(partKey, n) }, ConsistentRead: true }));
    if (!out.Item) {
      throw new SondageError(
        `part ${partKey} of campaign ${JSON.stringify(campaign)} phase ${JSON.stringify(phase)} is committed and its items not all marked, but mark chunk ${n} of ${chunks} is missing from table ${table}`,
      );
    }
    done.push(...(JSON.parse(out.Item.done_json as string) as string[]));
    failed.push(...(JSON.parse(out.Item.failed_json as string) as string[]));
    failedPermanently.push(...(JSON.parse(out.Item.permanent_json as string) as string[]));
  }
  return { done, failed, failedPermanently };
}

/** The key of a part's not-yet-marked row (deleted once its items are marked). */
export function unmarkedKey(campaign: string, phase: string, partKey: string): { pk: string; sk: string } {
  return { pk: unmarkedPk(campaign, phase), sk: partKey };
}
