/**
 * Per-partition item counters of the DynamoDB ledger: `COUNT#<c>#<phase>` / `<model>#<language>`
 * with `registered`, `done` and `failed`, so that `sondage status --aws` (Ledger.counts) reads one
 * row per partition (48 at 10 M prompts over 8 models × 6 languages) instead of every item row
 * (10 M consistent reads: ~1.25 M read units, ~$0.30 and minutes a call).
 *
 * They move where item states move: registration adds what it wrote; a part's marks (the item
 * updates after its commit) note on each item the state it came from and the part that moved it
 * (`from_state`, `part_key`), and the part's counters are added in the one transaction that sets the
 * part `marked`, once. A mark interrupted and finished by the next reader (repairUnmarked) finds
 * the items it already moved by their `part_key` and their `from_state`, so it adds the same
 * numbers, and the transaction's condition keeps them from being added twice.
 *
 * A phase counts only if its counting began with its first registered item (`counted` on its
 * registration counter, written by items.ts registerItems): items of a phase registered by a sondage
 * without counters are counted by reading their rows, as before.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { num, queryPages } from './context.js';
import type { TxItem } from './context.js';

/** What a change adds to a partition's counters (negative: takes away). */
export interface CounterDelta {
  registered: number;
  done: number;
  failed: number;
}

/** An item's state as the counters see it: `none` for a row that did not exist (an item never registered). */
export type CountedState = 'none' | 'pending' | 'done' | 'failed';

export const counterPk = (campaign: string, phase: string): string => `COUNT#${campaign}#${phase}`;
const counterSk = (model: string, language: string): string => `${model}#${language}`;

export const noDelta = (): CounterDelta => ({ registered: 0, done: 0, failed: 0 });

/** Adds the move of one item from `from` to `to` to `delta`. */
export function addTransition(delta: CounterDelta, from: CountedState, to: CountedState): void {
  if (from === to) return;
  if (from === 'none') delta.registered++;
  else if (from === 'done') delta.done--;
  else if (from === 'failed') delta.failed--;
  if (to === 'none') delta.registered--;
  else if (to === 'done') delta.done++;
  else if (to === 'failed') delta.failed++;
}

const isZero = (d: CounterDelta): boolean => d.registered === 0 && d.done === 0 && d.failed === 0;

/** The update that adds `delta` to a partition's counters (for a transaction), or undefined when it adds nothing. */
export function counterUpdate(table: string, campaign: string, phase: string, model: string, language: string, delta: CounterDelta): TxItem | undefined {
  if (isZero(delta)) return undefined;
  return {
    Update: {
      TableName: table,
      Key: { pk: counterPk(campaign, phase), sk: counterSk(model, language) },
      UpdateExpression: 'ADD registered :r, done_count :d, failed_count :f SET model = :m, #l = :l',
      ExpressionAttributeNames: { '#l': 'language' },
      ExpressionAttributeValues: { ':r': delta.registered, ':d': delta.done, ':f': delta.failed, ':m': model, ':l': language },
    },
  };
}

/** Adds `delta` to a partition's counters in a write of its own (registration). */
export async function bumpCounters(db: DynamoDBDocumentClient, table: string, campaign: string, phase: string, model: string, language: string, delta: CounterDelta): Promise<void> {
  const update = counterUpdate(table, campaign, phase, model, language, delta);
  if (update?.Update) await db.send(new UpdateCommand(update.Update));
}

/** Every partition's counters of a phase: one Query of at most one row per partition. */
export async function readCounters(db: DynamoDBDocumentClient, table: string, campaign: string, phase: string): Promise<{ model: string; language: string; registered: number; done: number; failed: number }[]> {
  const rows = await queryPages(db, { TableName: table, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': counterPk(campaign, phase) }, ConsistentRead: true });
  return rows.map((r) => ({ model: r.model as string, language: r.language as string, registered: num(r.registered), done: num(r.done_count), failed: num(r.failed_count) }));
}
