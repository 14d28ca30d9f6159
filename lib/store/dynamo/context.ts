/**
 * What every part of the DynamoDB ledger shares (DynamoLedger.ts is the facade over budget.ts,
 * items.ts, batches.ts, partitions.ts and failures.ts): the client and the two tables, the state
 * one DynamoLedger instance keeps between calls, and the few ways of talking to DynamoDB that all
 * of them use — a transaction retried while it loses races, a paged Query, bounded parallelism and
 * the SDK's backoff. Kept apart from keys.ts: these are how to ask, keys.ts is where things are.
 */
import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, QueryCommandInput, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';

/** One DynamoLedger's client, tables and memory; the facade builds it once and hands it to every concern. */
export interface DynamoContext {
  readonly db: DynamoDBDocumentClient;
  readonly ledgerTable: string;
  readonly budgetTable: string;
  /** Run ids of the campaigns this instance `initCampaign`ed. */
  readonly runIds: Map<string, string>;
  /** Run id for reservations of campaigns this instance did not `initCampaign` (a Lambda worker). */
  readonly defaultRunId: string;
  /** Whether the run id was given (a worker's ledger): its reservations are fenced. */
  readonly explicitRun: boolean;
  /** Campaigns whose fence refused a reservation of this ledger, with the fence found. */
  readonly fencedOut: Map<string, string>;
  /** (campaign, phase) pairs whose items this instance found in the sharded layout (items.ts assertItemLayout). */
  readonly layoutChecked: Set<string>;
}

export type Key = Record<string, string>;
export type TxItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Parallel single-item writes (registration, item marks). */
export const WRITE_CONCURRENCY = 16;
/** Retries of a transaction that lost a race (TransactionConflict). */
const CONFLICT_RETRIES = 20;

/** The run id this ledger's reservations and leases of `campaign` carry. */
export const runIdOf = (ctx: DynamoContext, campaign: string): string => ctx.runIds.get(campaign) ?? ctx.defaultRunId;

export const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

interface Cancelled {
  readonly name: string;
  readonly CancellationReasons?: readonly { Code?: string }[];
}

function cancellation(err: unknown): readonly string[] | undefined {
  const e = err as Cancelled;
  if (e?.name !== 'TransactionCanceledException') return undefined;
  return (e.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
}

export async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** Exponential backoff with full jitter, 50 ms doubling up to 5 s (what the AWS SDKs do for throttling). */
export async function backoff(attempt: number): Promise<void> {
  await new Promise((r) => setTimeout(r, Math.random() * Math.min(5000, 50 * 2 ** attempt)));
}

/** Runs a transaction, again while it loses races; returns the cancellation codes or undefined on success. */
export async function transact(ctx: DynamoContext, items: TxItem[]): Promise<readonly string[] | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ctx.db.send(new TransactWriteCommand({ TransactItems: items }));
      return undefined;
    } catch (err) {
      const codes = cancellation(err);
      if (codes === undefined) throw err;
      if (codes.includes('TransactionConflict') && attempt < CONFLICT_RETRIES) {
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
        continue;
      }
      return codes;
    }
  }
}

/** Every row a Query matches, page after page (leases.ts, counters.ts and partMarks.ts, which take a client and a table, use it too). */
export async function queryPages(db: DynamoDBDocumentClient, input: QueryCommandInput): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({ ...input, ...(start ? { ExclusiveStartKey: start } : {}) }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

export async function queryAll(ctx: DynamoContext, input: QueryCommandInput): Promise<Record<string, unknown>[]> {
  return queryPages(ctx.db, input);
}
