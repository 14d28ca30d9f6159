/**
 * Provider batches on the DynamoDB ledger (embedded/batches.ts is the same concern on SQLite):
 * `BATCH#<c>` / batch id an open or closed batch with the reservation that pays for it, and
 * `BATCH#<c>` / `INTENT#<submission key>` a batch about to be created, written before the provider
 * is asked so that a run killed mid-creation leaves a trace (and keeps the reservation held, see
 * budget.ts orphanStale). A batch is closed by the part commit that holds its results (items.ts
 * commitPart, with closeBatchItems), in the same transaction.
 */
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SondageError } from '../../errors.js';
import { TTL_ATTRIBUTE } from '../../config/index.js';
import type { BatchIntent, BatchRecord } from '../types.js';
import { release } from './budget.js';
import { queryAll, transact } from './context.js';
import type { DynamoContext, TxItem } from './context.js';
import { INTENT_PREFIX, batchPk } from './keys.js';

/** Closed batch records are kept this long, then expire (TTL). */
const CLOSED_BATCH_TTL_S = 30 * 24 * 3600;

/** The partition columns a batch record and a batch intent share, read from either kind of item. */
function partitionOf(campaign: string, b: Record<string, unknown>): Pick<BatchRecord, 'campaign' | 'phase' | 'model' | 'language'> {
  return { campaign, phase: b.phase as string, model: b.model as string, language: b.language as string };
}

function recordOf(campaign: string, b: Record<string, unknown>): BatchRecord {
  return {
    ...partitionOf(campaign, b),
    batchId: b.sk as string,
    handleJson: b.handle_json as string,
    reservationId: b.reservation_id as string,
    ...(typeof b.submission_key === 'string' ? { submissionKey: b.submission_key } : {}),
    ...(typeof b.cancelled_at === 'string' ? { cancelledAt: b.cancelled_at } : {}),
  };
}

function intentOf(campaign: string, b: Record<string, unknown>): BatchIntent {
  return {
    ...partitionOf(campaign, b),
    provider: b.provider as string,
    submissionKey: (b.sk as string).slice(INTENT_PREFIX.length),
    customIds: JSON.parse(b.custom_ids_json as string) as string[],
    reservationId: b.reservation_id as string,
    createdAt: b.created_at as number,
  };
}

/** The transaction items that close `batchIds` (a part commit holding their results): closed records expire by TTL. */
export function closeBatchItems(ctx: DynamoContext, campaign: string, batchIds: readonly string[]): TxItem[] {
  const now = Math.floor(Date.now() / 1000);
  return batchIds.map((id) => ({
    Update: {
      TableName: ctx.ledgerTable,
      Key: { pk: batchPk(campaign), sk: id },
      UpdateExpression: 'SET #s = :closed, #ttl = :ttl',
      ExpressionAttributeNames: { '#s': 'state', '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':closed': 'closed', ':ttl': now + CLOSED_BATCH_TTL_S },
    },
  }));
}

export async function recordBatch(ctx: DynamoContext, r: BatchRecord): Promise<void> {
  const put: TxItem = {
    Update: {
      TableName: ctx.ledgerTable,
      Key: { pk: batchPk(r.campaign), sk: r.batchId },
      ConditionExpression: 'attribute_not_exists(pk)',
      UpdateExpression:
        'SET phase = :phase, model = :model, #lang = :lang, handle_json = :h, reservation_id = :res, #s = :open, created_at = :t' +
        (r.submissionKey !== undefined ? ', submission_key = :k' : ''),
      ExpressionAttributeNames: { '#s': 'state', '#lang': 'language' },
      ExpressionAttributeValues: {
        ':phase': r.phase,
        ':model': r.model,
        ':lang': r.language,
        ':h': r.handleJson,
        ':res': r.reservationId,
        ':open': 'open',
        ':t': Date.now(),
        ...(r.submissionKey !== undefined ? { ':k': r.submissionKey } : {}),
      },
    },
  };
  // The record and the end of its intent are one write: a crash leaves one or the other.
  const items: TxItem[] = [put];
  if (r.submissionKey !== undefined) items.push({ Delete: { TableName: ctx.ledgerTable, Key: { pk: batchPk(r.campaign), sk: `${INTENT_PREFIX}${r.submissionKey}` } } });
  const codes = await transact(ctx, items);
  if (codes === undefined) return;
  if (codes[0] === 'ConditionalCheckFailed') {
    throw new SondageError(`batch ${JSON.stringify(r.batchId)} of campaign ${JSON.stringify(r.campaign)} is already recorded`);
  }
  throw new SondageError(`recordBatch ${JSON.stringify(r.batchId)} of campaign ${JSON.stringify(r.campaign)} was cancelled: ${codes.join(', ')}`);
}

async function batchRows(ctx: DynamoContext, campaign: string): Promise<Record<string, unknown>[]> {
  const rows = await queryAll(ctx, { TableName: ctx.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': batchPk(campaign) }, ConsistentRead: true });
  return rows.sort((a, b) => (a.created_at as number) - (b.created_at as number));
}

/** Open batches of one partition, oldest first. */
export async function openBatches(ctx: DynamoContext, campaign: string, phase: string, model: string, language: string): Promise<BatchRecord[]> {
  return (await batchRows(ctx, campaign))
    .filter((b) => b.state === 'open' && b.phase === phase && b.model === model && b.language === language)
    .map((b) => recordOf(campaign, b));
}

/** Open batches of every partition of a campaign, oldest first. */
export async function campaignBatches(ctx: DynamoContext, campaign: string): Promise<BatchRecord[]> {
  return (await batchRows(ctx, campaign)).filter((b) => b.state === 'open').map((b) => recordOf(campaign, b));
}

export async function markBatchCancelled(ctx: DynamoContext, campaign: string, batchId: string, at: string): Promise<void> {
  try {
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.ledgerTable,
        Key: { pk: batchPk(campaign), sk: batchId },
        ConditionExpression: '#s = :open',
        UpdateExpression: 'SET cancelled_at = if_not_exists(cancelled_at, :at)',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':open': 'open', ':at': at },
      }),
    );
  } catch (err) {
    // Closed meanwhile (its results were committed): nothing left to note.
    if ((err as { name?: string }).name !== 'ConditionalCheckFailedException') throw err;
  }
}

export async function recordBatchIntent(ctx: DynamoContext, i: BatchIntent): Promise<void> {
  try {
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.ledgerTable,
        Key: { pk: batchPk(i.campaign), sk: `${INTENT_PREFIX}${i.submissionKey}` },
        ConditionExpression: 'attribute_not_exists(pk)',
        UpdateExpression:
          'SET phase = :phase, model = :model, #lang = :lang, #prov = :provider, custom_ids_json = :ids, reservation_id = :res, #s = :intent, created_at = :t',
        ExpressionAttributeNames: { '#s': 'state', '#lang': 'language', '#prov': 'provider' },
        ExpressionAttributeValues: {
          ':phase': i.phase,
          ':model': i.model,
          ':lang': i.language,
          ':provider': i.provider,
          ':ids': JSON.stringify(i.customIds),
          ':res': i.reservationId,
          ':intent': 'intent',
          ':t': i.createdAt,
        },
      }),
    );
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') {
      throw new SondageError(`batch intent ${JSON.stringify(i.submissionKey)} of campaign ${JSON.stringify(i.campaign)} is already recorded`, { cause: err });
    }
    throw err;
  }
}

export async function batchIntents(ctx: DynamoContext, campaign: string, phase: string, model: string, language: string): Promise<BatchIntent[]> {
  return (await campaignBatchIntents(ctx, campaign)).filter((i) => i.phase === phase && i.model === model && i.language === language);
}

export async function campaignBatchIntents(ctx: DynamoContext, campaign: string): Promise<BatchIntent[]> {
  return (await batchRows(ctx, campaign)).filter((b) => b.state === 'intent').map((b) => intentOf(campaign, b));
}

export async function dropBatchIntent(ctx: DynamoContext, campaign: string, submissionKey: string): Promise<void> {
  const key = { pk: batchPk(campaign), sk: `${INTENT_PREFIX}${submissionKey}` };
  const out = await ctx.db.send(new GetCommand({ TableName: ctx.ledgerTable, Key: key, ConsistentRead: true }));
  if (!out.Item) return;
  // Release first: a crash in between leaves an intent whose reservation is gone, which the
  // next drop finishes (release of a missing reservation is a no-op).
  await release(ctx, campaign, out.Item.reservation_id as string);
  await ctx.db.send(new DeleteCommand({ TableName: ctx.ledgerTable, Key: key }));
}
