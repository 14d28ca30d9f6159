/**
 * Item states on the DynamoDB ledger (embedded/items.ts is the same concern on SQLite): what is
 * registered, what is still to ask, and what a committed part did to each item. Rows:
 * `ITEM#<c>#<phase>#<shard>` / item id (state, part, registration seq, model, language, retired),
 * spread over ITEM_SHARDS keys (keys.ts); `PART#<c>#<phase>` / part key a committed part;
 * `SEQ#<c>#<phase>` / `SEQ` the registration counter, whose `counted` says the phase's partition
 * counters (counters.ts) are whole.
 *
 * A part's commit lives here rather than with the budget because what it guarantees is about
 * items: the part record, its spend and its batches' closing are one transaction (budget.ts
 * settleMany, batches.ts closeBatchItems), and the item marks that follow are written down first
 * (partMarks.ts), so whoever next reads the phase's items finishes an interrupted commit.
 */
import { BatchGetCommand, BatchWriteCommand, DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SondageError } from '../../errors.js';
import { parsePartKey } from '../layout.js';
import { assertAmount, partCommitted } from '../ledgerRules.js';
import type { ItemCounts, LedgerPartition, PartCommit, PendingOptions } from '../types.js';
import { closeBatchItems } from './batches.js';
import { mergeReservations, noBudget, settleMany } from './budget.js';
import { WRITE_CONCURRENCY, backoff, inParallel, queryAll, transact } from './context.js';
import type { DynamoContext, Key, TxItem } from './context.js';
import { addTransition, bumpCounters, counterUpdate, noDelta, readCounters } from './counters.js';
import type { CountedState } from './counters.js';
import { ITEM_SHARDS, itemPk, legacyItemPk, partPk, shardPk } from './keys.js';
import { readMarks, unmarkedKey, unmarkedParts, unmarkedPut, writeMarkChunks } from './partMarks.js';

/** DynamoDB allows 100 actions per transaction; a commit keeps room for the part and the budget. */
const MAX_TX_RESERVATIONS = 90;
/**
 * Registration: keys per BatchGetItem and items per BatchWriteItem (DynamoDB's maxima), requests
 * in flight, and retries of items DynamoDB hands back unprocessed.
 *
 * Full size (FAR-6, ~1M generate items): 10,000 BatchGetItem + 40,000 BatchWriteItem requests. At
 * 32 in flight and ~15 ms a request (same Region) that is 50,000 × 15 ms / 32 ≈ 25 s of round
 * trips, where one conditional put per item at 16 in flight took 1M × 10 ms / 16 ≈ 625 s. The
 * bound is then DynamoDB's own: one partition key takes 1,000 WRU/s until DynamoDB splits it for
 * heat, so a phase's items are spread over ITEM_SHARDS (16) keys: 16,000 WRU/s, ~65 s of writes
 * for 1M items on a cold table instead of ~1,000 s under one key. Throttled writes come back as
 * UnprocessedItems and are retried here (a re-started plan skips what an interrupted one
 * registered: reads are 3,000 RRU/s a partition key).
 */
const BATCH_GET_KEYS = 100;
const BATCH_WRITE_ITEMS = 25;
const REGISTER_CONCURRENCY = 32;
const BATCH_WRITE_RETRIES = 12;
/**
 * pendingAmong: BatchGetItem requests in flight, and retries of keys handed back unprocessed. The
 * plan asks it for every partition (~210 requests of 100 keys each at full size): one at a time,
 * ~15 ms each, that was ~100 s of the plan's 900 s; 16 in flight stay well under a partition's
 * 3,000 RRU/s (a consistent read of a small item is 1 RRU), and what DynamoDB still throttles
 * comes back as UnprocessedKeys, asked again after a backoff.
 */
const PENDING_CONCURRENCY = 16;
const BATCH_GET_RETRIES = 12;

/** The item marks a commit makes. */
function marksOf(commit: PartCommit): { done: readonly string[]; failed: readonly string[]; failedPermanently: readonly string[] } {
  return { done: commit.done, failed: commit.failed, failedPermanently: commit.failedPermanently ?? [] };
}

/**
 * Registration in bulk, as cheap as DynamoDB allows: BatchWriteItem cannot be conditional, so the
 * ids already known (which keep their state) are read first, 100 keys per consistent BatchGetItem,
 * and only the new ones are put, 25 per BatchWriteItem, REGISTER_CONCURRENCY requests in flight,
 * unprocessed items retried with backoff. Per new item: 1 WRU + 1 RRU and 1/25 + 1/100 of a
 * request, against 1 WRU and one round trip each for a conditional put; per known item 1 RRU
 * (a conditional put that fails costs 1 WRU, five times the price).
 *
 * The read and the put are not one atomic step: an item created between them by another writer
 * would be reset to pending (asked once more, never lost), and counted twice. Only the plan registers
 * generate items, before any worker of its execution runs; a dependent phase's worker and a
 * give-up step register theirs only while their execution holds the fence, read after their lease
 * (runShards, giveUpShards), which a new plan waits on. So that takes two executions of one
 * campaign at work at once, which `sondage start --aws` and the fence refuse.
 *
 * Items are keyed by phase and id alone here (a key's place in DynamoDB is hashed: nothing to
 * gain from keeping a partition's ids together); the partition is noted by registerPartition.
 */
export async function registerItems(ctx: DynamoContext, campaign: string, { phase, model, language }: LedgerPartition, itemIds: readonly string[]): Promise<void> {
  const ids = [...new Set(itemIds)]; // BatchWriteItem refuses a request that names a key twice
  if (ids.length === 0) return;
  const known = await existingItems(ctx, campaign, phase, ids);
  const fresh = ids.filter((id) => !known.has(id));
  if (fresh.length === 0) return;
  // Registration order: a range of sequence numbers from one counter.
  const counter = await ctx.db.send(
    new UpdateCommand({
      TableName: ctx.ledgerTable,
      Key: { pk: `SEQ#${campaign}#${phase}`, sk: 'SEQ' },
      UpdateExpression: 'ADD next_seq :n',
      ExpressionAttributeValues: { ':n': fresh.length },
      ReturnValues: 'ALL_OLD',
    }),
  );
  const old = counter.Attributes;
  const first = typeof old?.next_seq === 'number' ? old.next_seq : 0;
  // The phase's first registration: its counters count from its first item (dynamo/counters.ts).
  if (old === undefined) {
    await ctx.db.send(new UpdateCommand({ TableName: ctx.ledgerTable, Key: { pk: `SEQ#${campaign}#${phase}`, sk: 'SEQ' }, UpdateExpression: 'SET counted = :t', ExpressionAttributeValues: { ':t': true } }));
  }
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < fresh.length; i += BATCH_WRITE_ITEMS) {
    batches.push(fresh.slice(i, i + BATCH_WRITE_ITEMS).map((id, j) => ({ pk: itemPk(campaign, phase, id), sk: id, state: 'pending', seq: first + i + j })));
  }
  await inParallel(batches, REGISTER_CONCURRENCY, (items) => putAll(ctx, items));
  // One counter write per registration, not per batch: the counter row is one key, ~1,000 writes/s.
  await bumpCounters(ctx.db, ctx.ledgerTable, campaign, phase, model, language, { registered: fresh.length, done: 0, failed: 0 });
}

/** The ids among `ids` that have an item row (any state). */
async function existingItems(ctx: DynamoContext, campaign: string, phase: string, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const groups: string[][] = [];
  for (let i = 0; i < ids.length; i += BATCH_GET_KEYS) groups.push(ids.slice(i, i + BATCH_GET_KEYS));
  await inParallel(groups, REGISTER_CONCURRENCY, (group) =>
    getAll(ctx, 'registerItems', campaign, phase, group, { ProjectionExpression: 'sk' }, (r) => found.add(r.sk as string)),
  );
  return found;
}

/**
 * Reads the item rows of up to 100 distinct ids in one BatchGetItem (consistent), again for the
 * keys DynamoDB hands back unprocessed (throttling), with backoff; `onRow` sees each row read.
 */
async function getAll(
  ctx: DynamoContext,
  what: string,
  campaign: string,
  phase: string,
  ids: readonly string[],
  projection: { ProjectionExpression: string; ExpressionAttributeNames?: Record<string, string> },
  onRow: (row: Record<string, unknown>) => void,
): Promise<void> {
  await assertItemLayout(ctx, campaign, phase);
  let keys: Key[] = ids.map((id) => ({ pk: itemPk(campaign, phase, id), sk: id }));
  for (let attempt = 0; keys.length > 0; attempt++) {
    if (attempt > BATCH_GET_RETRIES) throw new SondageError(`${what}: DynamoDB left ${keys.length} key(s) of table ${ctx.ledgerTable} unprocessed after ${BATCH_GET_RETRIES} retries`);
    if (attempt > 0) await backoff(attempt);
    const out = await ctx.db.send(new BatchGetCommand({ RequestItems: { [ctx.ledgerTable]: { Keys: keys, ...projection, ConsistentRead: true } } }));
    for (const r of out.Responses?.[ctx.ledgerTable] ?? []) onRow(r);
    keys = (out.UnprocessedKeys?.[ctx.ledgerTable]?.Keys ?? []) as Key[];
  }
}

/** Puts up to 25 items in one BatchWriteItem, again for those DynamoDB hands back unprocessed (throttling). */
async function putAll(ctx: DynamoContext, items: readonly Record<string, unknown>[]): Promise<void> {
  let requests = items.map((Item) => ({ PutRequest: { Item } }));
  for (let attempt = 0; requests.length > 0; attempt++) {
    if (attempt > BATCH_WRITE_RETRIES) throw new SondageError(`registerItems: DynamoDB left ${requests.length} item(s) of table ${ctx.ledgerTable} unprocessed after ${BATCH_WRITE_RETRIES} retries`);
    if (attempt > 0) await backoff(attempt);
    const out = await ctx.db.send(new BatchWriteCommand({ RequestItems: { [ctx.ledgerTable]: requests } }));
    requests = (out.UnprocessedItems?.[ctx.ledgerTable] ?? []) as typeof requests;
  }
}

async function itemRows(ctx: DynamoContext, campaign: string, phase: string): Promise<Record<string, unknown>[]> {
  await repairUnmarked(ctx, campaign, phase);
  return queryItems(ctx, campaign, phase, { ProjectionExpression: 'sk, #s, seq, retired', ExpressionAttributeNames: { '#s': 'state' } });
}

/** Every item row of a phase: one Query per shard key, in parallel. */
export async function queryItems(ctx: DynamoContext, campaign: string, phase: string, projection: { ProjectionExpression: string; ExpressionAttributeNames: Record<string, string> }): Promise<Record<string, unknown>[]> {
  await assertItemLayout(ctx, campaign, phase);
  const shards = await Promise.all(
    Array.from({ length: ITEM_SHARDS }, (_, s) =>
      queryAll(ctx, { TableName: ctx.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': shardPk(campaign, phase, s) }, ...projection, ConsistentRead: true }),
    ),
  );
  return shards.flat();
}

/**
 * Refuses a phase whose items a sondage before ITEM_SHARDS wrote under the one key
 * `ITEM#<c>#<phase>`: read in the sharded layout they would look unregistered, and their answered
 * items would be asked, and paid for, again. One Query of at most one row per phase and instance.
 */
async function assertItemLayout(ctx: DynamoContext, campaign: string, phase: string): Promise<void> {
  const id = `${campaign}\u0000${phase}`;
  if (ctx.layoutChecked.has(id)) return;
  const old = await ctx.db.send(
    new QueryCommand({ TableName: ctx.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': legacyItemPk(campaign, phase) }, Limit: 1, ProjectionExpression: 'sk' }),
  );
  if ((old.Items ?? []).length > 0) {
    throw new SondageError(
      `campaign ${JSON.stringify(campaign)} phase ${JSON.stringify(phase)}: table ${ctx.ledgerTable} holds its items under the one key ${legacyItemPk(campaign, phase)}, ` +
        `as sondage wrote them before it spread a phase's items over ${ITEM_SHARDS} keys (${shardPk(campaign, phase, 0)} …). Read here they would look unregistered and ` +
        'their answered items would be asked and paid for again, so nothing is done. Finish the campaign with the sondage version that started it, ' +
        'or remove it (`sondage purge <campaign> --aws`) and start it again',
    );
  }
  ctx.layoutChecked.add(id);
}

/** Items not done (pending or failed), in registration order. */
export async function pendingItems(ctx: DynamoContext, campaign: string, phase: string): Promise<Set<string>> {
  const rows = (await itemRows(ctx, campaign, phase)).filter((r) => r.state !== 'done' && r.retired !== true);
  const seq = (r: Record<string, unknown>): number => (typeof r.seq === 'number' ? r.seq : Number.MAX_SAFE_INTEGER);
  rows.sort((a, b) => seq(a) - seq(b));
  return new Set(rows.map((r) => r.sk as string));
}

/**
 * The ids among `itemIds` not yet done (unregistered ids included), in the order given; items
 * failed permanently only with `retryFailed`.
 */
export async function pendingAmong(ctx: DynamoContext, campaign: string, { phase }: LedgerPartition, itemIds: readonly string[], options: PendingOptions = {}): Promise<Set<string>> {
  const retryFailed = options.retryFailed === true;
  await repairUnmarked(ctx, campaign, phase);
  // Distinct ids (a BatchGetItem refuses duplicate keys), 100 a request, PENDING_CONCURRENCY in flight.
  const unique = [...new Set(itemIds)];
  const groups: string[][] = [];
  for (let i = 0; i < unique.length; i += BATCH_GET_KEYS) groups.push(unique.slice(i, i + BATCH_GET_KEYS));
  const done = new Set<string>();
  const projection = { ProjectionExpression: 'sk, #s, permanent', ExpressionAttributeNames: { '#s': 'state' } };
  await inParallel(groups, PENDING_CONCURRENCY, (group) =>
    getAll(ctx, 'pendingAmong', campaign, phase, group, projection, (r) => {
      if (r.state === 'done' || (r.state === 'failed' && r.permanent === true && !retryFailed)) done.add(r.sk as string);
    }),
  );
  return new Set(itemIds.filter((id) => !done.has(id)));
}

/**
 * The part record and the budget move in one transaction (a part is adopted once, its cost counted
 * once); item states follow, idempotently. The marks are written down before the transaction and
 * the transaction records the part as not yet marked, so a commit interrupted after it (a killed
 * Lambda, a throttle past the SDK's retries) is finished by the next reader of the phase's pending
 * items (repairUnmarked), or by the next commitPart of the same part, which then reports it as committed.
 */
export async function commitPart(ctx: DynamoContext, commit: PartCommit): Promise<void> {
  assertAmount('part cost', commit.costUsd);
  const { campaign, phase, partKey } = commit;
  const closeBatches = (commit as PartCommit & { closeBatches?: readonly string[] }).closeBatches ?? [];
  if (closeBatches.length > MAX_TX_RESERVATIONS) throw new SondageError(`commitPart ${partKey}: at most ${MAX_TX_RESERVATIONS} batches close in one part`);
  let reservations = [...(commit.reservationIds ?? [])];
  if (reservations.length + closeBatches.length > MAX_TX_RESERVATIONS) reservations = await mergeReservations(ctx, campaign, partKey, reservations);

  const partItem: TxItem = {
    Put: {
      TableName: ctx.ledgerTable,
      Item: { pk: partPk(campaign, phase), sk: partKey, model: commit.model, language: commit.language, cost_usd: commit.costUsd, marked: false, done_count: commit.done.length, failed_count: commit.failed.length + (commit.failedPermanently?.length ?? 0) },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  const batchItems = closeBatchItems(ctx, campaign, closeBatches);
  // The marks go down first and the transaction names them: a commit is never left with its items pending (dynamo/partMarks.ts).
  const chunks = await writeMarkChunks(ctx.db, ctx.ledgerTable, campaign, phase, partKey, marksOf(commit));
  const unmarked = unmarkedPut(ctx.ledgerTable, campaign, phase, partKey, chunks);
  const codes = await settleMany(ctx, campaign, reservations, commit.costUsd, [partItem, unmarked, ...batchItems], commit.possiblyBilledUsd ?? 0);
  if (codes !== undefined) {
    if (codes[0] === 'ConditionalCheckFailed') {
      const existing = await ctx.db.send(new GetCommand({ TableName: ctx.ledgerTable, Key: { pk: partPk(campaign, phase), sk: partKey }, ConsistentRead: true }));
      if (existing.Item && existing.Item.marked !== true) await markItems(ctx, commit);
      throw partCommitted(campaign, phase, partKey);
    }
    if (codes.at(-1) === 'ConditionalCheckFailed') throw noBudget(ctx, campaign);
    throw new SondageError(`commitPart ${partKey}: transaction cancelled (${codes.join(', ')})`);
  }
  await markItems(ctx, commit);
}

/**
 * Marks the items of every part of a phase committed and left unmarked (a writer killed or
 * throttled between its commit and its last mark), before anyone reads what is pending there.
 */
async function repairUnmarked(ctx: DynamoContext, campaign: string, phase: string): Promise<void> {
  for (const { partKey, chunks } of await unmarkedParts(ctx.db, ctx.ledgerTable, campaign, phase)) {
    const marks = await readMarks(ctx.db, ctx.ledgerTable, campaign, phase, partKey, chunks);
    await markItems(ctx, { campaign, phase, partKey, ...marks });
  }
}

async function markItems(ctx: DynamoContext, commit: Pick<PartCommit, 'campaign' | 'phase' | 'partKey' | 'done' | 'failed' | 'failedPermanently'> & Partial<Pick<PartCommit, 'model' | 'language'>>): Promise<void> {
  const { campaign, phase, partKey } = commit;
  await assertItemLayout(ctx, campaign, phase);
  // What the marks move, for the partition's counters (dynamo/counters.ts): each item's state
  // before this part first moved it, and the state this part leaves it in.
  const moved = new Map<string, { from: CountedState; to: CountedState }>();
  // `permanent` as the embedded ledger's column: the last attempt decides whether a run asks again.
  const mark = (state: 'done' | 'failed', permanent = false) => async (id: string) => {
    const key = { pk: itemPk(campaign, phase, id), sk: id };
    const values = { ':done': 'done', ':state': state, ':part': partKey, ':perm': permanent };
    try {
      const out = await ctx.db.send(
        new UpdateCommand({
          TableName: ctx.ledgerTable,
          Key: key,
          // An item done in an earlier part keeps that part: its reply is already counted. An
          // item this part moved already is marked again below, keeping the state it came from.
          // (`<>` is true of an absent attribute.)
          ConditionExpression: '#s <> :done AND part_key <> :part',
          UpdateExpression: 'SET #s = :state, part_key = :part, permanent = :perm, from_state = if_not_exists(#s, :none)',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ...values, ':none': 'none' },
          ReturnValues: 'ALL_OLD',
        }),
      );
      const before = out.Attributes;
      if (before?.retired !== true) moved.set(id, { from: (before?.state as CountedState | undefined) ?? 'none', to: state });
    } catch (err) {
      if ((err as { name?: string }).name !== 'ConditionalCheckFailedException') throw err;
      // Done by another part (nothing moves), or moved by this part already: by this mark's
      // earlier run (a mark finished again) or by its own other list (failed, then failed for good).
      const got = (await ctx.db.send(new GetCommand({ TableName: ctx.ledgerTable, Key: key, ConsistentRead: true }))).Item;
      if (got?.part_key !== partKey) return;
      let to = got.state as CountedState;
      if (to !== 'done') {
        try {
          await ctx.db.send(
            new UpdateCommand({ TableName: ctx.ledgerTable, Key: key, ConditionExpression: '#s <> :done AND part_key = :part', UpdateExpression: 'SET #s = :state, permanent = :perm', ExpressionAttributeNames: { '#s': 'state' }, ExpressionAttributeValues: values }),
          );
          to = state;
        } catch (again) {
          if ((again as { name?: string }).name !== 'ConditionalCheckFailedException') throw again;
          to = 'done';
        }
      }
      if (got.retired !== true) moved.set(id, { from: (got.from_state as CountedState | undefined) ?? 'none', to });
    }
  };
  await inParallel(commit.done, WRITE_CONCURRENCY, mark('done'));
  await inParallel(commit.failed, WRITE_CONCURRENCY, mark('failed'));
  await inParallel(commit.failedPermanently ?? [], WRITE_CONCURRENCY, mark('failed', true));
  const delta = noDelta();
  for (const { from, to } of moved.values()) addTransition(delta, from, to);
  // The part marked and its counters added in one transaction, once: a part already marked adds nothing.
  const where = commit.model !== undefined && commit.language !== undefined ? { model: commit.model, language: commit.language } : await partPartition(ctx, campaign, phase, partKey);
  const counted = where ? counterUpdate(ctx.ledgerTable, campaign, phase, where.model, where.language, delta) : undefined;
  const marked: TxItem = {
    Update: {
      TableName: ctx.ledgerTable,
      Key: { pk: partPk(campaign, phase), sk: partKey },
      UpdateExpression: 'SET marked = :t',
      ConditionExpression: 'marked <> :t',
      ExpressionAttributeValues: { ':t': true },
    },
  };
  const codes = await transact(ctx, counted ? [marked, counted] : [marked]);
  if (codes !== undefined && codes[0] !== 'ConditionalCheckFailed') throw new SondageError(`commitPart ${partKey}: marking its items was cancelled (${codes.join(', ')})`);
  await ctx.db.send(new DeleteCommand({ TableName: ctx.ledgerTable, Key: unmarkedKey(campaign, phase, partKey) }));
}

/** The partition of a committed part, as its record holds it (records of an older sondage: from its key). */
async function partPartition(ctx: DynamoContext, campaign: string, phase: string, partKey: string): Promise<{ model: string; language: string } | undefined> {
  const got = (await ctx.db.send(new GetCommand({ TableName: ctx.ledgerTable, Key: { pk: partPk(campaign, phase), sk: partKey }, ConsistentRead: true }))).Item;
  if (typeof got?.model === 'string' && typeof got.language === 'string') return { model: got.model, language: got.language };
  const parsed = parsePartKey(partKey);
  return parsed ? { model: parsed.model, language: parsed.language } : undefined;
}

export async function committedParts(ctx: DynamoContext, campaign: string, phase: string): Promise<Set<string>> {
  const rows = await queryAll(ctx, { TableName: ctx.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': partPk(campaign, phase) }, ConsistentRead: true });
  return new Set(rows.map((r) => r.sk as string));
}

/**
 * A phase's counts from its partitions' counters (dynamo/counters.ts): one GetItem and one Query
 * of a row per partition, whatever the number of items; a phase registered before counters
 * existed is counted from its item rows.
 */
export async function counts(ctx: DynamoContext, campaign: string, phase: string): Promise<ItemCounts> {
  await repairUnmarked(ctx, campaign, phase);
  const seq = await ctx.db.send(new GetCommand({ TableName: ctx.ledgerTable, Key: { pk: `SEQ#${campaign}#${phase}`, sk: 'SEQ' }, ConsistentRead: true }));
  if (seq.Item?.counted === true) {
    const sum = { registered: 0, done: 0, failed: 0 };
    for (const c of await readCounters(ctx.db, ctx.ledgerTable, campaign, phase)) {
      sum.registered += c.registered;
      sum.done += c.done;
      sum.failed += c.failed;
    }
    return { pending: sum.registered - sum.done - sum.failed, done: sum.done, failed: sum.failed };
  }
  return countRows(ctx, campaign, phase);
}

/** Counts read from every item row of a phase (a phase without counters). */
export async function countRows(ctx: DynamoContext, campaign: string, phase: string): Promise<ItemCounts> {
  const out = { pending: 0, done: 0, failed: 0 };
  for (const r of await itemRows(ctx, campaign, phase)) {
    if (r.retired === true) continue;
    const state = r.state as keyof typeof out;
    if (state in out) out[state]++;
  }
  return out;
}
