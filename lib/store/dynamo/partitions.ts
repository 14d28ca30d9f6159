/**
 * The partitions of a campaign's current design on the DynamoDB ledger (embedded/partitions.ts is
 * the same concern on SQLite): `PARTITION#<c>` / `<phase>#<model>#<language>` with the partition's
 * size and a digest of its ids. Registering a partition registers its ids (items.ts), notes on each
 * item row the partition it now belongs to, retires the ids the design no longer has, and moves the
 * partitions' counters (counters.ts) with them; a digest equal to the recorded one means nothing
 * changed, and nothing is read.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { idsDigest } from '../orphans.js';
import type { LedgerPartition, PartitionRecord } from '../types.js';
import { WRITE_CONCURRENCY, inParallel, num, queryAll } from './context.js';
import type { DynamoContext } from './context.js';
import { addTransition, bumpCounters, noDelta } from './counters.js';
import type { CountedState, CounterDelta } from './counters.js';
import { registerItems, queryItems } from './items.js';
import { itemPk, partitionPk } from './keys.js';

/**
 * Ledger.registerPartition. When the partition's digest is the recorded one, nothing to do;
 * otherwise the ids are registered, and the phase's items read once (a changed design is rare)
 * to note the partition of each id and retire the ids the partition no longer has.
 */
export async function registerPartition(ctx: DynamoContext, campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
  const { phase, model, language } = partition;
  const key = { pk: partitionPk(campaign), sk: `${phase}#${model}#${language}` };
  const digest = idsDigest(itemIds);
  const known = await ctx.db.send(new GetCommand({ TableName: ctx.ledgerTable, Key: key, ConsistentRead: true }));
  if (known.Item?.digest === digest) return;
  await registerItems(ctx, campaign, partition, itemIds);
  const wanted = new Set(itemIds);
  const rows = await queryItems(ctx, campaign, phase, { ProjectionExpression: 'sk, model, #l, retired, #s', ExpressionAttributeNames: { '#l': 'language', '#s': 'state' } });
  // What the moves do to the partitions' counters (dynamo/counters.ts): an item without a
  // partition yet was counted here by registerItems.
  const deltas = new Map<string, { model: string; language: string; delta: CounterDelta }>();
  const move = (m: string, l: string, state: unknown, sign: 1 | -1): void => {
    const key = `${m}\u0000${l}`;
    const d = deltas.get(key) ?? { model: m, language: l, delta: noDelta() };
    deltas.set(key, d);
    if (sign > 0) addTransition(d.delta, 'none', (state as CountedState | undefined) ?? 'pending');
    else addTransition(d.delta, (state as CountedState | undefined) ?? 'pending', 'none');
  };
  const changes = rows.flatMap((r) => {
    const id = r.sk as string;
    const here = r.model === model && r.language === language;
    if (wanted.has(id)) {
      if (here && r.retired !== true) return [];
      if (r.model !== undefined) {
        if (r.retired !== true) move(r.model as string, r.language as string, r.state, -1);
        move(model, language, r.state, 1);
      }
      return [{ id, retired: false }];
    }
    if (!here || r.retired === true) return [];
    move(model, language, r.state, -1);
    return [{ id, retired: true }];
  });
  await inParallel(changes, WRITE_CONCURRENCY, async (c) => {
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.ledgerTable,
        Key: { pk: itemPk(campaign, phase, c.id), sk: c.id },
        UpdateExpression: 'SET model = :m, #l = :l, retired = :r',
        ExpressionAttributeNames: { '#l': 'language' },
        ExpressionAttributeValues: { ':m': model, ':l': language, ':r': c.retired },
      }),
    );
  });
  for (const d of deltas.values()) await bumpCounters(ctx.db, ctx.ledgerTable, campaign, phase, d.model, d.language, d.delta);
  await ctx.db.send(new PutCommand({ TableName: ctx.ledgerTable, Item: { ...key, phase, model, language, items: itemIds.length, digest } }));
}

export async function partitions(ctx: DynamoContext, campaign: string): Promise<PartitionRecord[]> {
  const rows = await queryAll(ctx, { TableName: ctx.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': partitionPk(campaign) }, ConsistentRead: true });
  return rows.map((r) => ({ phase: r.phase as string, model: r.model as string, language: r.language as string, items: num(r.items) }));
}
