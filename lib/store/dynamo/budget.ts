/**
 * The DynamoDB ledger's money (DESIGN.md "Cost and safety rails"; embedded/budget.ts is the same
 * concern on SQLite): the budget item `BUDGET` of the budget table, its reservations `RES#<id>`, and
 * the campaign's fence, which is kept on the budget item so that a reservation checks it in the
 * same conditional write as the cap.
 *
 * DynamoDB conditions cannot add attributes, so the cap check reads the precomputed headroom
 * (cap − spent − reserved − possibly billed): `reserve` is one transaction of "headroom ≥ amount →
 * headroom −= amount, reserved += amount" and "put RES#<id> if absent". Every later change
 * (settle, release, orphans, a part's commit through settleMany) moves money between the same
 * numbers in the same transaction as the reservation it concerns, so concurrent workers can never
 * reserve past the cap.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SondageError } from '../../errors.js';
import { CAP_TOLERANCE_USD, assertAmount, duplicateReservation } from '../ledgerRules.js';
import { orphanBill } from '../orphans.js';
import { MAX_SCOPE_IDS } from '../types.js';
import type { BudgetState, LedgerPartition, ReservationScope } from '../types.js';
import { num, queryAll, runIdOf, transact } from './context.js';
import type { DynamoContext, TxItem } from './context.js';
import { batchPk, budgetKey, reservationKey } from './keys.js';

// Not in ledgerRules.ts with the other refusals: each backend names where it looked (a table here, a file there).
export function noBudget(ctx: DynamoContext, campaign: string): SondageError {
  return new SondageError(`campaign ${JSON.stringify(campaign)} has no budget in table ${ctx.budgetTable}; call initCampaign first`);
}

/**
 * The transaction item that deletes a reservation only while it still holds the amount read, so
 * that a concurrent release or settle of the same reservation cannot be counted twice.
 */
function reservationDelete(ctx: DynamoContext, campaign: string, id: string, amount: number): TxItem {
  return { Delete: { TableName: ctx.budgetTable, Key: reservationKey(campaign, id), ConditionExpression: 'amount_usd = :a', ExpressionAttributeValues: { ':a': amount } } };
}

async function reservationAmount(ctx: DynamoContext, campaign: string, id: string): Promise<number | undefined> {
  const out = await ctx.db.send(new GetCommand({ TableName: ctx.budgetTable, Key: reservationKey(campaign, id), ConsistentRead: true }));
  return out.Item ? (out.Item.amount_usd as number) : undefined;
}

/** Creates the campaign's budget, or updates its cap; spending so far is kept across runs. */
export async function initCampaign(ctx: DynamoContext, campaign: string, capUsd: number, runId: string): Promise<void> {
  assertAmount('cap', capUsd);
  ctx.runIds.set(campaign, runId);
  for (;;) {
    const current = await ctx.db.send(new GetCommand({ TableName: ctx.budgetTable, Key: budgetKey(campaign), ConsistentRead: true }));
    try {
      if (!current.Item) {
        await ctx.db.send(
          new UpdateCommand({
            TableName: ctx.budgetTable,
            Key: budgetKey(campaign),
            ConditionExpression: 'attribute_not_exists(pk)',
            UpdateExpression: 'SET cap_usd = :cap, spent_usd = :zero, reserved_usd = :zero, headroom_usd = :cap, run_id = :run, fence = :run',
            ExpressionAttributeValues: { ':cap': capUsd, ':zero': 0, ':run': runId },
          }),
        );
      } else {
        // Headroom moves by the change of cap; the condition fails if another writer changed the cap meanwhile.
        const oldCap = current.Item.cap_usd as number;
        await ctx.db.send(
          new UpdateCommand({
            TableName: ctx.budgetTable,
            Key: budgetKey(campaign),
            ConditionExpression: 'cap_usd = :old',
            // The fence moves to this run: workers of an earlier one reserve nothing more (see `fence`).
            UpdateExpression: 'SET cap_usd = :cap, headroom_usd = headroom_usd + :delta, run_id = :run, fence = :run',
            ExpressionAttributeValues: { ':old': oldCap, ':cap': capUsd, ':delta': capUsd - oldCap, ':run': runId },
          }),
        );
      }
      return;
    } catch (err) {
      if ((err as { name?: string }).name !== 'ConditionalCheckFailedException') throw err;
    }
  }
}

/**
 * Moves the campaign's fence to `token` (`sondage stop --aws`; a plan's initCampaign moves it to
 * its execution): from the next reservation on, only a ledger whose run id is the fence may
 * reserve, so workers of an earlier generation, still running for up to their Lambda timeout,
 * stop at their next chunk. Settling and committing what they already reserved is not fenced:
 * calls already sent are counted. Returns false when the campaign has no budget (never planned).
 */
export async function fence(ctx: DynamoContext, campaign: string, token: string): Promise<boolean> {
  try {
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.budgetTable,
        Key: budgetKey(campaign),
        ConditionExpression: 'attribute_exists(pk)',
        UpdateExpression: 'SET fence = :f, fenced_at = :t',
        ExpressionAttributeValues: { ':f': token, ':t': new Date().toISOString() },
      }),
    );
    return true;
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

/**
 * Ledger.flagOverrun: a provider billed `excessUsd` past what a call of `model` reserved. The
 * fence moves to an overrun token, so every worker of the campaign, in every invocation, stops at
 * its next chunk (a re-started execution's plan moves it back), and the excess is added up on
 * the budget item beside the model that caused it.
 */
export async function flagOverrun(ctx: DynamoContext, campaign: string, model: string, excessUsd: number): Promise<void> {
  assertAmount('overrun', excessUsd);
  const at = new Date().toISOString();
  await ctx.db.send(
    new UpdateCommand({
      TableName: ctx.budgetTable,
      Key: budgetKey(campaign),
      ConditionExpression: 'attribute_exists(pk)',
      UpdateExpression: 'SET fence = :f, overrun_model = :m, overrun_at = :t, overrun_usd = if_not_exists(overrun_usd, :zero) + :x',
      ExpressionAttributeValues: { ':f': `overrun by ${model} at ${at}`, ':m': model, ':t': at, ':x': excessUsd, ':zero': 0 },
    }),
  );
}

/** The overrun flagOverrun recorded (the last model, the excess added up, when): what `status --aws` shows. */
export async function overrunOf(ctx: DynamoContext, campaign: string): Promise<{ readonly model: string; readonly excessUsd: number; readonly at: string } | undefined> {
  const out = await ctx.db.send(
    new GetCommand({ TableName: ctx.budgetTable, Key: budgetKey(campaign), ConsistentRead: true, ProjectionExpression: 'overrun_model, overrun_usd, overrun_at' }),
  );
  const i = out.Item;
  return typeof i?.overrun_model === 'string' ? { model: i.overrun_model, excessUsd: num(i.overrun_usd), at: String(i.overrun_at ?? '') } : undefined;
}

/** The campaign's fence: the run allowed to reserve, or a stop's token; undefined before any plan set one. */
export async function fenceOf(ctx: DynamoContext, campaign: string): Promise<string | undefined> {
  const out = await ctx.db.send(new GetCommand({ TableName: ctx.budgetTable, Key: budgetKey(campaign), ConsistentRead: true, ProjectionExpression: 'fence' }));
  return typeof out.Item?.fence === 'string' ? out.Item.fence : undefined;
}

/**
 * The fence when it names another run than this ledger's (whose reservations it therefore refuses);
 * undefined when this ledger may reserve, or does not know its run.
 */
export async function fencedOutBy(ctx: DynamoContext, campaign: string): Promise<string | undefined> {
  if (!(ctx.explicitRun || ctx.runIds.has(campaign))) return undefined;
  const fence = await fenceOf(ctx, campaign);
  return fence !== undefined && fence !== runIdOf(ctx, campaign) ? fence : undefined;
}

export async function budget(ctx: DynamoContext, campaign: string): Promise<BudgetState> {
  const out = await ctx.db.send(new GetCommand({ TableName: ctx.budgetTable, Key: budgetKey(campaign), ConsistentRead: true }));
  if (!out.Item) throw noBudget(ctx, campaign);
  const i = out.Item;
  return { cap_usd: num(i.cap_usd), spent_usd: num(i.spent_usd), reserved_usd: num(i.reserved_usd), orphaned_usd: num(i.orphaned_usd), possibly_billed_usd: num(i.possibly_billed_usd) };
}

export async function reserve(ctx: DynamoContext, campaign: string, reservationId: string, amountUsd: number, scope?: ReservationScope): Promise<boolean> {
  assertAmount('reservation amount', amountUsd);
  const covered = scope
    ? { phase: scope.phase, model: scope.model, language: scope.language, item_count: scope.itemIds.length, ...(scope.itemIds.length <= MAX_SCOPE_IDS ? { item_ids: [...scope.itemIds] } : {}) }
    : {};
  const runId = runIdOf(ctx, campaign);
  // Fenced: a ledger that knows its run (a worker's, a plan's) reserves only while the budget's
  // fence names that run; a budget no plan fenced yet (older versions) is open to all.
  const fenced = ctx.explicitRun || ctx.runIds.has(campaign);
  const codes = await transact(ctx, [
    {
      Update: {
        TableName: ctx.budgetTable,
        Key: budgetKey(campaign),
        // In disjunctive form (DynamoDB: AND binds tighter than OR).
        ConditionExpression: fenced
          ? 'attribute_exists(pk) AND headroom_usd >= :need AND attribute_not_exists(fence) OR attribute_exists(pk) AND headroom_usd >= :need AND fence = :run'
          : 'attribute_exists(pk) AND headroom_usd >= :need',
        UpdateExpression: 'SET headroom_usd = headroom_usd - :a, reserved_usd = reserved_usd + :a',
        ExpressionAttributeValues: { ':a': amountUsd, ':need': amountUsd - CAP_TOLERANCE_USD, ...(fenced ? { ':run': runId } : {}) },
      },
    },
    {
      Put: {
        TableName: ctx.budgetTable,
        Item: { ...reservationKey(campaign, reservationId), amount_usd: amountUsd, run_id: runId, ...covered },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ]);
  if (codes === undefined) return true;
  if (codes[1] === 'ConditionalCheckFailed') {
    throw duplicateReservation(campaign, reservationId);
  }
  if (codes[0] === 'ConditionalCheckFailed') {
    await budget(ctx, campaign); // throws when the campaign has no budget at all
    if (fenced) {
      const fence = await fenceOf(ctx, campaign);
      if (fence !== undefined && fence !== runId) ctx.fencedOut.set(campaign, fence);
    }
    return false;
  }
  throw new SondageError(`reserve ${JSON.stringify(reservationId)} of campaign ${JSON.stringify(campaign)}: transaction cancelled (${codes.join(', ')})`);
}

/**
 * Budget-moving transaction items for deleting reservations and adding spend: each reservation
 * is deleted only if it still holds the amount read, so a concurrent release cannot be counted twice.
 */
async function settleItems(ctx: DynamoContext, campaign: string, reservationIds: readonly string[], actualUsd: number, billedUsd = 0): Promise<TxItem[]> {
  const items: TxItem[] = [];
  let released = 0;
  for (const id of reservationIds) {
    const amount = await reservationAmount(ctx, campaign, id);
    if (amount === undefined) continue; // released as stale: the money was still spent, below
    released += amount;
    items.push(reservationDelete(ctx, campaign, id, amount));
  }
  items.push({
    Update: {
      TableName: ctx.budgetTable,
      Key: budgetKey(campaign),
      ConditionExpression: 'attribute_exists(pk)',
      // Possibly billed (attempts sent and never answered) stays out of the headroom, as spend does.
      UpdateExpression:
        'SET spent_usd = spent_usd + :spent, possibly_billed_usd = if_not_exists(possibly_billed_usd, :zero) + :billed, reserved_usd = reserved_usd - :released, headroom_usd = headroom_usd + :back',
      ExpressionAttributeValues: { ':spent': actualUsd, ':billed': billedUsd, ':zero': 0, ':released': released, ':back': released - actualUsd - billedUsd },
    },
  });
  return items;
}

export async function settleMany(ctx: DynamoContext, campaign: string, reservationIds: readonly string[], actualUsd: number, extra: TxItem[] = [], billedUsd = 0): Promise<readonly string[] | undefined> {
  for (;;) {
    const items = [...extra, ...(await settleItems(ctx, campaign, reservationIds, actualUsd, billedUsd))];
    const codes = await transact(ctx, items);
    if (codes === undefined) return undefined;
    // A reservation changed between read and write (released meanwhile): read again.
    const raced = codes.some((c, i) => c === 'ConditionalCheckFailed' && i >= extra.length && items[i]?.Delete !== undefined);
    if (!raced) return codes;
  }
}

export async function settle(ctx: DynamoContext, campaign: string, reservationId: string, actualUsd: number): Promise<void> {
  assertAmount('actual cost', actualUsd);
  const codes = await settleMany(ctx, campaign, [reservationId], actualUsd);
  if (codes !== undefined) throw codes.at(-1) === 'ConditionalCheckFailed' ? noBudget(ctx, campaign) : new SondageError(`settle: transaction cancelled (${codes.join(', ')})`);
}

export async function release(ctx: DynamoContext, campaign: string, reservationId: string): Promise<void> {
  for (;;) {
    const amount = await reservationAmount(ctx, campaign, reservationId);
    if (amount === undefined) return;
    const codes = await transact(ctx, [
      reservationDelete(ctx, campaign, reservationId, amount),
      {
        Update: {
          TableName: ctx.budgetTable,
          Key: budgetKey(campaign),
          UpdateExpression: 'SET reserved_usd = reserved_usd - :a, headroom_usd = headroom_usd + :a',
          ExpressionAttributeValues: { ':a': amount },
        },
      },
    ]);
    if (codes === undefined) return;
  }
}

/** All reservations of a campaign. */
async function reservationRows(ctx: DynamoContext, campaign: string): Promise<Record<string, unknown>[]> {
  return queryAll(ctx, {
    TableName: ctx.budgetTable,
    KeyConditionExpression: 'pk = :c AND begins_with(sk, :r)',
    ExpressionAttributeValues: { ':c': campaign, ':r': 'RES#' },
    ConsistentRead: true,
  });
}

/** Removes one reservation and moves its amount out of reserved: `billed` of it to possibly billed, the rest back to headroom. */
async function dropReservation(ctx: DynamoContext, campaign: string, id: string, amount: number, billed: number, orphaned: boolean): Promise<void> {
  const codes = await transact(ctx, [
    reservationDelete(ctx, campaign, id, amount),
    {
      Update: {
        TableName: ctx.budgetTable,
        Key: budgetKey(campaign),
        UpdateExpression:
          'SET reserved_usd = reserved_usd - :a, orphaned_usd = if_not_exists(orphaned_usd, :zero) - :o, possibly_billed_usd = if_not_exists(possibly_billed_usd, :zero) + :b, headroom_usd = headroom_usd + :back',
        ExpressionAttributeValues: { ':a': amount, ':o': orphaned ? amount : 0, ':b': billed, ':back': amount - billed, ':zero': 0 },
      },
    },
  ]);
  // Already gone (settled or dropped by another writer): nothing to move.
  if (codes !== undefined && codes[0] !== 'ConditionalCheckFailed') throw new SondageError(`reservation ${id}: transaction cancelled (${codes.join(', ')})`);
}

/** Reservations of other runs, except those holding an open provider batch or an intent (Ledger.orphanStale). */
export async function orphanStale(ctx: DynamoContext, campaign: string, runId: string, mode: 'hold' | 'bill'): Promise<{ count: number; amountUsd: number }> {
  const reservations = await reservationRows(ctx, campaign);
  const batches = await queryAll(ctx, { TableName: ctx.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': batchPk(campaign) }, ConsistentRead: true });
  // An intent's reservation is held too: its batch may exist at the provider, unrecorded.
  const held = new Set(batches.filter((b) => b.state === 'open' || b.state === 'intent').map((b) => b.reservation_id as string));
  let count = 0;
  let amountUsd = 0;
  for (const r of reservations) {
    const id = (r.sk as string).slice('RES#'.length);
    if (r.run_id === runId || held.has(id) || r.orphaned === true) continue;
    const amount = r.amount_usd as number;
    count++;
    amountUsd += amount;
    if (mode === 'bill' || typeof r.phase !== 'string') {
      await dropReservation(ctx, campaign, id, amount, amount, false);
      continue;
    }
    const codes = await transact(ctx, [
      {
        Update: {
          TableName: ctx.budgetTable,
          Key: reservationKey(campaign, id),
          ConditionExpression: 'amount_usd = :a AND run_id = :run',
          UpdateExpression: 'SET orphaned = :t',
          ExpressionAttributeValues: { ':a': amount, ':run': r.run_id, ':t': true },
        },
      },
      {
        Update: {
          TableName: ctx.budgetTable,
          Key: budgetKey(campaign),
          UpdateExpression: 'SET orphaned_usd = if_not_exists(orphaned_usd, :zero) + :a',
          ExpressionAttributeValues: { ':a': amount, ':zero': 0 },
        },
      },
    ]);
    if (codes !== undefined && codes[0] !== 'ConditionalCheckFailed') throw new SondageError(`orphanStale ${id}: transaction cancelled (${codes.join(', ')})`);
  }
  return { count, amountUsd };
}

export async function resolveOrphans(
  ctx: DynamoContext,
  campaign: string,
  partition: LedgerPartition,
  replied: ReadonlySet<string>,
  maxCostOf: (itemId: string) => number | undefined,
): Promise<{ resolved: number; billedUsd: number }> {
  let resolved = 0;
  let billedUsd = 0;
  for (const r of await reservationRows(ctx, campaign)) {
    if (r.orphaned !== true || r.phase !== partition.phase || r.model !== partition.model || r.language !== partition.language) continue;
    const amount = r.amount_usd as number;
    const billed = orphanBill(amount, Array.isArray(r.item_ids) ? (r.item_ids as string[]) : null, replied, maxCostOf);
    await dropReservation(ctx, campaign, (r.sk as string).slice('RES#'.length), amount, billed, true);
    resolved++;
    billedUsd += billed;
  }
  return { resolved, billedUsd };
}

export async function inFlight(ctx: DynamoContext, campaign: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const r of await reservationRows(ctx, campaign)) {
    if (r.orphaned === true || typeof r.phase !== 'string') continue;
    out.set(r.phase, (out.get(r.phase) ?? 0) + num(r.item_count));
  }
  return out;
}

/** Folds many reservations into one (budget-neutral: reserved is unchanged), so a commit fits one transaction. */
export async function mergeReservations(ctx: DynamoContext, campaign: string, partKey: string, ids: readonly string[]): Promise<string[]> {
  const merged = `${partKey}#merged`;
  for (let i = 0; i < ids.length; i += 50) {
    for (;;) {
      const chunk = ids.slice(i, i + 50);
      const amounts = await Promise.all(chunk.map(async (id) => [id, await reservationAmount(ctx, campaign, id)] as const));
      const present = amounts.filter((a): a is readonly [string, number] => a[1] !== undefined);
      if (present.length === 0) break;
      const sum = present.reduce((s, [, a]) => s + a, 0);
      const codes = await transact(ctx, [
        ...present.map(([id, a]) => reservationDelete(ctx, campaign, id, a)),
        {
          Update: {
            TableName: ctx.budgetTable,
            Key: reservationKey(campaign, merged),
            UpdateExpression: 'ADD amount_usd :s SET run_id = if_not_exists(run_id, :run)',
            ExpressionAttributeValues: { ':s': sum, ':run': runIdOf(ctx, campaign) },
          },
        },
      ]);
      if (codes === undefined) break;
    }
  }
  return [merged];
}
