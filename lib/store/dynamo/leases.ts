/**
 * Worker leases (DynamoLedger.heartbeat / liveHolders): while a worker invocation runs it keeps a
 * row `LEASE#<c>` / `<holder>` whose `until` it pushes forward every few seconds, and removes the
 * row when it returns. A plan that has just moved the fence (lib/run/planWave.ts) waits until no
 * lease of another run is live: fenced workers stop at their next chunk, commit what they asked
 * and return, and only then do the new generation's workers read what is pending, so no item is
 * asked by two generations. A killed worker stops beating and its lease lapses within one lease
 * length: a dead worker cannot be told from a live one but by time.
 */
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '../../config/index.js';
import { queryPages } from './context.js';

const leasePk = (campaign: string): string => `LEASE#${campaign}`;

/** Puts (or pushes forward) a holder's lease until `untilMs` (ms since the epoch). */
export async function putLease(db: DynamoDBDocumentClient, table: string, campaign: string, holder: string, runId: string, untilMs: number): Promise<void> {
  // The row expires by TTL a day later, whatever became of its holder.
  await db.send(new PutCommand({ TableName: table, Item: { pk: leasePk(campaign), sk: holder, run_id: runId, until_ms: untilMs, [TTL_ATTRIBUTE]: Math.floor(untilMs / 1000) + 86_400 } }));
}

export async function dropLease(db: DynamoDBDocumentClient, table: string, campaign: string, holder: string): Promise<void> {
  await db.send(new DeleteCommand({ TableName: table, Key: { pk: leasePk(campaign), sk: holder } }));
}

/** Leases of runs other than `exceptRunId` still live at `nowMs`: how many, and when the last lapses. */
export async function liveLeases(db: DynamoDBDocumentClient, table: string, campaign: string, exceptRunId: string, nowMs: number): Promise<{ count: number; untilMs: number; runs: string[] }> {
  const rows = await queryPages(db, { TableName: table, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': leasePk(campaign) }, ConsistentRead: true });
  const live = rows.filter((r) => r.run_id !== exceptRunId && typeof r.until_ms === 'number' && r.until_ms > nowMs);
  return { count: live.length, untilMs: Math.max(0, ...live.map((r) => r.until_ms as number)), runs: [...new Set(live.map((r) => r.run_id as string))] };
}
