/**
 * The ledger on DynamoDB (DESIGN.md "Cost and safety rails"; the Ledger interface of types.ts, whose
 * other implementation is EmbeddedLedger). Loaded lazily by the Lambda workers and the CLI's `--aws`
 * commands, not re-exported from lib/store/index.ts.
 *
 * Budget table (pk = campaign): `BUDGET` holds cap, spent, reserved, possibly billed (calls of
 * killed runs that left no reply), orphaned (the part of reserved a killed run holds) and headroom =
 * cap − spent − reserved − possibly billed; `RES#<id>` one reservation, with its partition and items. DynamoDB conditions cannot add attributes, so the cap check
 * reads the precomputed headroom: `reserve` is one transaction of "headroom ≥ amount → headroom −=
 * amount, reserved += amount" and "put RES#<id> if absent". Every later change moves money between
 * the same three numbers in the same transaction as the reservation it concerns, so concurrent
 * workers can never reserve past the cap.
 *
 * Ledger table: `ITEM#<c>#<phase>#<shard>` / item id (state, part, registration seq, model, language,
 * retired), the shard a hash of the item id (ITEM_SHARDS); `PARTITION#<c>` / `<phase>#<model>#<language>` a registered partition; `PART#<c>#<phase>` /
 * part key; `LEASE#<c>` / holder a live worker's lease (dynamo/leases.ts); `MARKS#<c>#<phase>` / `<part key>#<n>` and `UNMARKED#<c>#<phase>` / part key the item marks
 * of a committed part until they are made (dynamo/partMarks.ts); `BATCH#<c>` / batch id, and `BATCH#<c>` / `INTENT#<submission key>` a batch about to be
 * created; `SEQ#<c>#<phase>` / `SEQ` the registration counter.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { QueryCommandInput, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { SondageError } from '../errors.js';
import { TTL_ATTRIBUTE } from '../config/index.js';
import { PartCommittedError } from './errors.js';
import { parsePartKey } from './layout.js';
import { MAX_SCOPE_IDS } from './types.js';
import type { BatchIntent, BatchRecord, BudgetState, Ledger, LedgerPartition, PartCommit, PartitionRecord, PendingOptions, ReservationScope } from './types.js';
import { idsDigest, orphanBill } from './orphans.js';
import { dropLease, liveLeases, putLease } from './dynamo/leases.js';
import { readMarks, unmarkedKey, unmarkedParts, unmarkedPut, writeMarkChunks } from './dynamo/partMarks.js';
import { addTransition, bumpCounters, counterUpdate, noDelta, readCounters } from './dynamo/counters.js';
import type { CountedState, CounterDelta } from './dynamo/counters.js';

/** Rounding slack of the cap check, as in EmbeddedLedger. */
const CAP_TOLERANCE_USD = 1e-12;
/** DynamoDB allows 100 actions per transaction; a commit keeps room for the part and the budget. */
const MAX_TX_RESERVATIONS = 90;
/** Parallel single-item writes (registration, item marks). */
const WRITE_CONCURRENCY = 16;
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
/** Closed batch records are kept this long, then expire (TTL). */
const CLOSED_BATCH_TTL_S = 30 * 24 * 3600;
/** Retries of a transaction that lost a race (TransactionConflict). */
const CONFLICT_RETRIES = 20;

/** One failed step of a campaign execution. */
export interface ExecutionFailure {
  readonly campaign: string;
  /** Step Functions execution ARN. */
  readonly execution: string;
  /** ISO time the failure was recorded. */
  readonly at: string;
  /** Step Functions error name (`States.TaskFailed`, `Lambda.Unknown`, …). */
  readonly error: string;
  /** The cause text Step Functions gives (often JSON of the failed task's error). */
  readonly cause: string;
}

export interface DynamoLedgerOptions {
  readonly ledgerTable: string;
  readonly budgetTable: string;
  readonly client?: DynamoDBClient;
  readonly clientConfig?: DynamoDBClientConfig;
  /** Run id for reservations of campaigns this instance did not `initCampaign` (a Lambda worker). */
  readonly runId?: string;
}

type Key = Record<string, string>;
type TxItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

interface Cancelled {
  readonly name: string;
  readonly CancellationReasons?: readonly { Code?: string }[];
}

function cancellation(err: unknown): readonly string[] | undefined {
  const e = err as Cancelled;
  if (e?.name !== 'TransactionCanceledException') return undefined;
  return (e.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
}

function assertAmount(what: string, amount: number): void {
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
    throw new SondageError(`${what} must be a finite number of USD ≥ 0, got ${String(amount)}`);
  }
}

async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** Exponential backoff with full jitter, 50 ms doubling up to 5 s (what the AWS SDKs do for throttling). */
async function backoff(attempt: number): Promise<void> {
  await new Promise((r) => setTimeout(r, Math.random() * Math.min(5000, 50 * 2 ** attempt)));
}

const budgetKey = (campaign: string): Key => ({ pk: campaign, sk: 'BUDGET' });
const reservationKey = (campaign: string, id: string): Key => ({ pk: campaign, sk: `RES#${id}` });
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

const shardPk = (campaign: string, phase: string, shard: number): string => `ITEM#${campaign}#${phase}#${String(shard).padStart(2, '0')}`;
const itemPk = (campaign: string, phase: string, id: string): string => shardPk(campaign, phase, itemShard(id));
/** The one key every item of a phase had before ITEM_SHARDS: a ledger holding it is refused (assertItemLayout). */
const legacyItemPk = (campaign: string, phase: string): string => `ITEM#${campaign}#${phase}`;
const partPk = (campaign: string, phase: string): string => `PART#${campaign}#${phase}`;
const batchPk = (campaign: string): string => `BATCH#${campaign}`;
const partitionPk = (campaign: string): string => `PARTITION#${campaign}`;
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const INTENT_PREFIX = 'INTENT#';

function recordOf(campaign: string, b: Record<string, unknown>): BatchRecord {
  return {
    campaign,
    phase: b.phase as string,
    model: b.model as string,
    language: b.language as string,
    batchId: b.sk as string,
    handleJson: b.handle_json as string,
    reservationId: b.reservation_id as string,
    ...(typeof b.submission_key === 'string' ? { submissionKey: b.submission_key } : {}),
    ...(typeof b.cancelled_at === 'string' ? { cancelledAt: b.cancelled_at } : {}),
  };
}

function intentOf(campaign: string, b: Record<string, unknown>): BatchIntent {
  return {
    campaign,
    phase: b.phase as string,
    model: b.model as string,
    language: b.language as string,
    provider: b.provider as string,
    submissionKey: (b.sk as string).slice(INTENT_PREFIX.length),
    customIds: JSON.parse(b.custom_ids_json as string) as string[],
    reservationId: b.reservation_id as string,
    createdAt: b.created_at as number,
  };
}

/** The item marks a commit makes. */
function marksOf(commit: PartCommit): { done: readonly string[]; failed: readonly string[]; failedPermanently: readonly string[] } {
  return { done: commit.done, failed: commit.failed, failedPermanently: commit.failedPermanently ?? [] };
}

/**
 * @example
 * const ledger = new DynamoLedger({ ledgerTable: process.env.SONDAGE_LEDGER_TABLE!, budgetTable: process.env.SONDAGE_BUDGET_TABLE! });
 * if (await ledger.reserve('demo', callId, maxCost)) { …call…; await ledger.settle('demo', callId, cost); }
 */
export class DynamoLedger implements Ledger {
  private readonly db: DynamoDBDocumentClient;
  private readonly raw: DynamoDBClient;
  private readonly ledgerTable: string;
  private readonly budgetTable: string;
  private readonly defaultRunId: string;
  private readonly runIds = new Map<string, string>();
  /** Whether the run id was given (a worker's ledger): its reservations are fenced. */
  private readonly explicitRun: boolean;
  /** Campaigns whose fence refused a reservation of this ledger, with the fence found. */
  readonly fencedOut = new Map<string, string>();

  constructor(options: DynamoLedgerOptions) {
    this.raw = options.client ?? new DynamoDBClient(options.clientConfig ?? {});
    this.db = DynamoDBDocumentClient.from(this.raw, { marshallOptions: { removeUndefinedValues: true } });
    this.ledgerTable = options.ledgerTable;
    this.budgetTable = options.budgetTable;
    this.explicitRun = options.runId !== undefined;
    this.defaultRunId = options.runId ?? `lambda-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  }

  private noBudget(campaign: string): SondageError {
    return new SondageError(`campaign ${JSON.stringify(campaign)} has no budget in table ${this.budgetTable}; call initCampaign first`);
  }

  /** Runs a transaction, again while it loses races; returns the cancellation codes or undefined on success. */
  private async transact(items: TxItem[]): Promise<readonly string[] | undefined> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.db.send(new TransactWriteCommand({ TransactItems: items }));
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

  private async reservationAmount(campaign: string, id: string): Promise<number | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.budgetTable, Key: reservationKey(campaign, id), ConsistentRead: true }));
    return out.Item ? (out.Item.amount_usd as number) : undefined;
  }

  private async queryAll(input: QueryCommandInput): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(new QueryCommand({ ...input, ...(start ? { ExclusiveStartKey: start } : {}) }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** Creates the campaign's budget, or updates its cap; spending so far is kept across runs. */
  async initCampaign(campaign: string, capUsd: number, runId: string): Promise<void> {
    assertAmount('cap', capUsd);
    this.runIds.set(campaign, runId);
    for (;;) {
      const current = await this.db.send(new GetCommand({ TableName: this.budgetTable, Key: budgetKey(campaign), ConsistentRead: true }));
      try {
        if (!current.Item) {
          await this.db.send(
            new UpdateCommand({
              TableName: this.budgetTable,
              Key: budgetKey(campaign),
              ConditionExpression: 'attribute_not_exists(pk)',
              UpdateExpression: 'SET cap_usd = :cap, spent_usd = :zero, reserved_usd = :zero, headroom_usd = :cap, run_id = :run, fence = :run',
              ExpressionAttributeValues: { ':cap': capUsd, ':zero': 0, ':run': runId },
            }),
          );
        } else {
          // Headroom moves by the change of cap; the condition fails if another writer changed the cap meanwhile.
          const oldCap = current.Item.cap_usd as number;
          await this.db.send(
            new UpdateCommand({
              TableName: this.budgetTable,
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
  async fence(campaign: string, token: string): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.budgetTable,
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
  async flagOverrun(campaign: string, model: string, excessUsd: number): Promise<void> {
    assertAmount('overrun', excessUsd);
    const at = new Date().toISOString();
    await this.db.send(
      new UpdateCommand({
        TableName: this.budgetTable,
        Key: budgetKey(campaign),
        ConditionExpression: 'attribute_exists(pk)',
        UpdateExpression: 'SET fence = :f, overrun_model = :m, overrun_at = :t, overrun_usd = if_not_exists(overrun_usd, :zero) + :x',
        ExpressionAttributeValues: { ':f': `overrun by ${model} at ${at}`, ':m': model, ':t': at, ':x': excessUsd, ':zero': 0 },
      }),
    );
  }

  /** The overrun flagOverrun recorded (the last model, the excess added up, when): what `status --aws` shows. */
  async overrunOf(campaign: string): Promise<{ readonly model: string; readonly excessUsd: number; readonly at: string } | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.budgetTable, Key: budgetKey(campaign), ConsistentRead: true, ProjectionExpression: 'overrun_model, overrun_usd, overrun_at' }),
    );
    const i = out.Item;
    return typeof i?.overrun_model === 'string' ? { model: i.overrun_model, excessUsd: num(i.overrun_usd), at: String(i.overrun_at ?? '') } : undefined;
  }

  /** The campaign's fence: the run allowed to reserve, or a stop's token; undefined before any plan set one. */
  async fenceOf(campaign: string): Promise<string | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.budgetTable, Key: budgetKey(campaign), ConsistentRead: true, ProjectionExpression: 'fence' }));
    return typeof out.Item?.fence === 'string' ? out.Item.fence : undefined;
  }

  /** Ledger.heartbeat: this ledger's run holds a live worker (`holder`) until `untilMs` (dynamo/leases.ts). */
  async heartbeat(campaign: string, holder: string, untilMs: number): Promise<void> {
    await putLease(this.db, this.ledgerTable, campaign, holder, this.runIds.get(campaign) ?? this.defaultRunId, untilMs);
  }

  async endHeartbeat(campaign: string, holder: string): Promise<void> {
    await dropLease(this.db, this.ledgerTable, campaign, holder);
  }

  async liveHolders(campaign: string, exceptRunId: string): Promise<{ count: number; untilMs: number; runs: string[] }> {
    return liveLeases(this.db, this.ledgerTable, campaign, exceptRunId, Date.now());
  }

  async budget(campaign: string): Promise<BudgetState> {
    const out = await this.db.send(new GetCommand({ TableName: this.budgetTable, Key: budgetKey(campaign), ConsistentRead: true }));
    if (!out.Item) throw this.noBudget(campaign);
    const i = out.Item;
    return { cap_usd: num(i.cap_usd), spent_usd: num(i.spent_usd), reserved_usd: num(i.reserved_usd), orphaned_usd: num(i.orphaned_usd), possibly_billed_usd: num(i.possibly_billed_usd) };
  }

  async reserve(campaign: string, reservationId: string, amountUsd: number, scope?: ReservationScope): Promise<boolean> {
    assertAmount('reservation amount', amountUsd);
    const covered = scope
      ? { phase: scope.phase, model: scope.model, language: scope.language, item_count: scope.itemIds.length, ...(scope.itemIds.length <= MAX_SCOPE_IDS ? { item_ids: [...scope.itemIds] } : {}) }
      : {};
    const runId = this.runIds.get(campaign) ?? this.defaultRunId;
    // Fenced: a ledger that knows its run (a worker's, a plan's) reserves only while the budget's
    // fence names that run; a budget no plan fenced yet (older versions) is open to all.
    const fenced = this.explicitRun || this.runIds.has(campaign);
    const codes = await this.transact([
      {
        Update: {
          TableName: this.budgetTable,
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
          TableName: this.budgetTable,
          Item: { ...reservationKey(campaign, reservationId), amount_usd: amountUsd, run_id: runId, ...covered },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ]);
    if (codes === undefined) return true;
    if (codes[1] === 'ConditionalCheckFailed') {
      throw new SondageError(`reservation ${JSON.stringify(reservationId)} of campaign ${JSON.stringify(campaign)} already exists; reservation ids must be unique`);
    }
    if (codes[0] === 'ConditionalCheckFailed') {
      await this.budget(campaign); // throws when the campaign has no budget at all
      if (fenced) {
        const fence = await this.fenceOf(campaign);
        if (fence !== undefined && fence !== runId) this.fencedOut.set(campaign, fence);
      }
      return false;
    }
    throw new SondageError(`reserve ${JSON.stringify(reservationId)} of campaign ${JSON.stringify(campaign)}: transaction cancelled (${codes.join(', ')})`);
  }

  /**
   * Budget-moving transaction items for deleting reservations and adding spend: each reservation
   * is deleted only if it still holds the amount read, so a concurrent release cannot be counted twice.
   */
  private async settleItems(campaign: string, reservationIds: readonly string[], actualUsd: number, billedUsd = 0): Promise<TxItem[]> {
    const items: TxItem[] = [];
    let released = 0;
    for (const id of reservationIds) {
      const amount = await this.reservationAmount(campaign, id);
      if (amount === undefined) continue; // released as stale: the money was still spent, below
      released += amount;
      items.push({
        Delete: {
          TableName: this.budgetTable,
          Key: reservationKey(campaign, id),
          ConditionExpression: 'amount_usd = :a',
          ExpressionAttributeValues: { ':a': amount },
        },
      });
    }
    items.push({
      Update: {
        TableName: this.budgetTable,
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

  private async settleMany(campaign: string, reservationIds: readonly string[], actualUsd: number, extra: TxItem[] = [], billedUsd = 0): Promise<readonly string[] | undefined> {
    for (;;) {
      const items = [...extra, ...(await this.settleItems(campaign, reservationIds, actualUsd, billedUsd))];
      const codes = await this.transact(items);
      if (codes === undefined) return undefined;
      // A reservation changed between read and write (released meanwhile): read again.
      const raced = codes.some((c, i) => c === 'ConditionalCheckFailed' && i >= extra.length && items[i]?.Delete !== undefined);
      if (!raced) return codes;
    }
  }

  async settle(campaign: string, reservationId: string, actualUsd: number): Promise<void> {
    assertAmount('actual cost', actualUsd);
    const codes = await this.settleMany(campaign, [reservationId], actualUsd);
    if (codes !== undefined) throw codes.at(-1) === 'ConditionalCheckFailed' ? this.noBudget(campaign) : new SondageError(`settle: transaction cancelled (${codes.join(', ')})`);
  }

  async release(campaign: string, reservationId: string): Promise<void> {
    for (;;) {
      const amount = await this.reservationAmount(campaign, reservationId);
      if (amount === undefined) return;
      const codes = await this.transact([
        {
          Delete: {
            TableName: this.budgetTable,
            Key: reservationKey(campaign, reservationId),
            ConditionExpression: 'amount_usd = :a',
            ExpressionAttributeValues: { ':a': amount },
          },
        },
        {
          Update: {
            TableName: this.budgetTable,
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
  private async reservations(campaign: string): Promise<Record<string, unknown>[]> {
    return this.queryAll({
      TableName: this.budgetTable,
      KeyConditionExpression: 'pk = :c AND begins_with(sk, :r)',
      ExpressionAttributeValues: { ':c': campaign, ':r': 'RES#' },
      ConsistentRead: true,
    });
  }

  /** Removes one reservation and moves its amount out of reserved: `billed` of it to possibly billed, the rest back to headroom. */
  private async dropReservation(campaign: string, id: string, amount: number, billed: number, orphaned: boolean): Promise<void> {
    const codes = await this.transact([
      {
        Delete: {
          TableName: this.budgetTable,
          Key: reservationKey(campaign, id),
          ConditionExpression: 'amount_usd = :a',
          ExpressionAttributeValues: { ':a': amount },
        },
      },
      {
        Update: {
          TableName: this.budgetTable,
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
  async orphanStale(campaign: string, runId: string, mode: 'hold' | 'bill'): Promise<{ count: number; amountUsd: number }> {
    const reservations = await this.reservations(campaign);
    const batches = await this.queryAll({ TableName: this.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': batchPk(campaign) }, ConsistentRead: true });
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
        await this.dropReservation(campaign, id, amount, amount, false);
        continue;
      }
      const codes = await this.transact([
        {
          Update: {
            TableName: this.budgetTable,
            Key: reservationKey(campaign, id),
            ConditionExpression: 'amount_usd = :a AND run_id = :run',
            UpdateExpression: 'SET orphaned = :t',
            ExpressionAttributeValues: { ':a': amount, ':run': r.run_id, ':t': true },
          },
        },
        {
          Update: {
            TableName: this.budgetTable,
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

  async resolveOrphans(
    campaign: string,
    partition: LedgerPartition,
    replied: ReadonlySet<string>,
    maxCostOf: (itemId: string) => number | undefined,
  ): Promise<{ resolved: number; billedUsd: number }> {
    let resolved = 0;
    let billedUsd = 0;
    for (const r of await this.reservations(campaign)) {
      if (r.orphaned !== true || r.phase !== partition.phase || r.model !== partition.model || r.language !== partition.language) continue;
      const amount = r.amount_usd as number;
      const billed = orphanBill(amount, Array.isArray(r.item_ids) ? (r.item_ids as string[]) : null, replied, maxCostOf);
      await this.dropReservation(campaign, (r.sk as string).slice('RES#'.length), amount, billed, true);
      resolved++;
      billedUsd += billed;
    }
    return { resolved, billedUsd };
  }

  async inFlight(campaign: string): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const r of await this.reservations(campaign)) {
      if (r.orphaned === true || typeof r.phase !== 'string') continue;
      out.set(r.phase, (out.get(r.phase) ?? 0) + num(r.item_count));
    }
    return out;
  }

  /**
   * Ledger.registerPartition. When the partition's digest is the recorded one, nothing to do;
   * otherwise the ids are registered, and the phase's items read once (a changed design is rare)
   * to note the partition of each id and retire the ids the partition no longer has.
   */
  async registerPartition(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    const { phase, model, language } = partition;
    const key = { pk: partitionPk(campaign), sk: `${phase}#${model}#${language}` };
    const digest = idsDigest(itemIds);
    const known = await this.db.send(new GetCommand({ TableName: this.ledgerTable, Key: key, ConsistentRead: true }));
    if (known.Item?.digest === digest) return;
    await this.registerItems(campaign, partition, itemIds);
    const wanted = new Set(itemIds);
    const rows = await this.queryItems(campaign, phase, { ProjectionExpression: 'sk, model, #l, retired, #s', ExpressionAttributeNames: { '#l': 'language', '#s': 'state' } });
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
      await this.db.send(
        new UpdateCommand({
          TableName: this.ledgerTable,
          Key: { pk: itemPk(campaign, phase, c.id), sk: c.id },
          UpdateExpression: 'SET model = :m, #l = :l, retired = :r',
          ExpressionAttributeNames: { '#l': 'language' },
          ExpressionAttributeValues: { ':m': model, ':l': language, ':r': c.retired },
        }),
      );
    });
    for (const d of deltas.values()) await bumpCounters(this.db, this.ledgerTable, campaign, phase, d.model, d.language, d.delta);
    await this.db.send(new PutCommand({ TableName: this.ledgerTable, Item: { ...key, phase, model, language, items: itemIds.length, digest } }));
  }

  async partitions(campaign: string): Promise<PartitionRecord[]> {
    const rows = await this.queryAll({ TableName: this.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': partitionPk(campaign) }, ConsistentRead: true });
    return rows.map((r) => ({ phase: r.phase as string, model: r.model as string, language: r.language as string, items: num(r.items) }));
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
   * would be reset to pending (asked once more, never lost). Only the plan registers generate
   * items, before any worker of its execution runs, so that takes two executions of one campaign
   * at once, which `sondage start --aws` refuses.
   *
   * Items are keyed by phase and id alone here (a key's place in DynamoDB is hashed: nothing to
   * gain from keeping a partition's ids together); the partition is noted by registerPartition.
   */
  async registerItems(campaign: string, { phase, model, language }: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    const ids = [...new Set(itemIds)]; // BatchWriteItem refuses a request that names a key twice
    if (ids.length === 0) return;
    const known = await this.existingItems(campaign, phase, ids);
    const fresh = ids.filter((id) => !known.has(id));
    if (fresh.length === 0) return;
    // Registration order: a range of sequence numbers from one counter.
    const counter = await this.db.send(
      new UpdateCommand({
        TableName: this.ledgerTable,
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
      await this.db.send(new UpdateCommand({ TableName: this.ledgerTable, Key: { pk: `SEQ#${campaign}#${phase}`, sk: 'SEQ' }, UpdateExpression: 'SET counted = :t', ExpressionAttributeValues: { ':t': true } }));
    }
    const batches: Record<string, unknown>[][] = [];
    for (let i = 0; i < fresh.length; i += BATCH_WRITE_ITEMS) {
      batches.push(fresh.slice(i, i + BATCH_WRITE_ITEMS).map((id, j) => ({ pk: itemPk(campaign, phase, id), sk: id, state: 'pending', seq: first + i + j })));
    }
    await inParallel(batches, REGISTER_CONCURRENCY, (items) => this.putAll(items));
    // One counter write per registration, not per batch: the counter row is one key, ~1,000 writes/s.
    await bumpCounters(this.db, this.ledgerTable, campaign, phase, model, language, { registered: fresh.length, done: 0, failed: 0 });
  }

  /** The ids among `ids` that have an item row (any state). */
  private async existingItems(campaign: string, phase: string, ids: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    const groups: string[][] = [];
    for (let i = 0; i < ids.length; i += BATCH_GET_KEYS) groups.push(ids.slice(i, i + BATCH_GET_KEYS));
    await inParallel(groups, REGISTER_CONCURRENCY, (group) =>
      this.getAll('registerItems', campaign, phase, group, { ProjectionExpression: 'sk' }, (r) => found.add(r.sk as string)),
    );
    return found;
  }

  /**
   * Reads the item rows of up to 100 distinct ids in one BatchGetItem (consistent), again for the
   * keys DynamoDB hands back unprocessed (throttling), with backoff; `onRow` sees each row read.
   */
  private async getAll(
    what: string,
    campaign: string,
    phase: string,
    ids: readonly string[],
    projection: { ProjectionExpression: string; ExpressionAttributeNames?: Record<string, string> },
    onRow: (row: Record<string, unknown>) => void,
  ): Promise<void> {
    await this.assertItemLayout(campaign, phase);
    let keys: Key[] = ids.map((id) => ({ pk: itemPk(campaign, phase, id), sk: id }));
    for (let attempt = 0; keys.length > 0; attempt++) {
      if (attempt > BATCH_GET_RETRIES) throw new SondageError(`${what}: DynamoDB left ${keys.length} key(s) of table ${this.ledgerTable} unprocessed after ${BATCH_GET_RETRIES} retries`);
      if (attempt > 0) await backoff(attempt);
      const out = await this.db.send(new BatchGetCommand({ RequestItems: { [this.ledgerTable]: { Keys: keys, ...projection, ConsistentRead: true } } }));
      for (const r of out.Responses?.[this.ledgerTable] ?? []) onRow(r);
      keys = (out.UnprocessedKeys?.[this.ledgerTable]?.Keys ?? []) as Key[];
    }
  }

  /** Puts up to 25 items in one BatchWriteItem, again for those DynamoDB hands back unprocessed (throttling). */
  private async putAll(items: readonly Record<string, unknown>[]): Promise<void> {
    let requests = items.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > BATCH_WRITE_RETRIES) throw new SondageError(`registerItems: DynamoDB left ${requests.length} item(s) of table ${this.ledgerTable} unprocessed after ${BATCH_WRITE_RETRIES} retries`);
      if (attempt > 0) await backoff(attempt);
      const out = await this.db.send(new BatchWriteCommand({ RequestItems: { [this.ledgerTable]: requests } }));
      requests = (out.UnprocessedItems?.[this.ledgerTable] ?? []) as typeof requests;
    }
  }

  private async items(campaign: string, phase: string): Promise<Record<string, unknown>[]> {
    await this.repairUnmarked(campaign, phase);
    return this.queryItems(campaign, phase, { ProjectionExpression: 'sk, #s, seq, retired', ExpressionAttributeNames: { '#s': 'state' } });
  }

  /** Every item row of a phase: one Query per shard key, in parallel. */
  private async queryItems(campaign: string, phase: string, projection: { ProjectionExpression: string; ExpressionAttributeNames: Record<string, string> }): Promise<Record<string, unknown>[]> {
    await this.assertItemLayout(campaign, phase);
    const shards = await Promise.all(
      Array.from({ length: ITEM_SHARDS }, (_, s) =>
        this.queryAll({ TableName: this.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': shardPk(campaign, phase, s) }, ...projection, ConsistentRead: true }),
      ),
    );
    return shards.flat();
  }

  /** (campaign, phase) pairs whose items this instance found in the sharded layout. */
  private readonly layoutChecked = new Set<string>();

  /**
   * Refuses a phase whose items a sondage before ITEM_SHARDS wrote under the one key
   * `ITEM#<c>#<phase>`: read in the sharded layout they would look unregistered, and their answered
   * items would be asked, and paid for, again. One Query of at most one row per phase and instance.
   */
  private async assertItemLayout(campaign: string, phase: string): Promise<void> {
    const id = `${campaign}\u0000${phase}`;
    if (this.layoutChecked.has(id)) return;
    const old = await this.db.send(
      new QueryCommand({ TableName: this.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': legacyItemPk(campaign, phase) }, Limit: 1, ProjectionExpression: 'sk' }),
    );
    if ((old.Items ?? []).length > 0) {
      throw new SondageError(
        `campaign ${JSON.stringify(campaign)} phase ${JSON.stringify(phase)}: table ${this.ledgerTable} holds its items under the one key ${legacyItemPk(campaign, phase)}, ` +
          `as sondage wrote them before it spread a phase's items over ${ITEM_SHARDS} keys (${shardPk(campaign, phase, 0)} …). Read here they would look unregistered and ` +
          'their answered items would be asked and paid for again, so nothing is done. Finish the campaign with the sondage version that started it, ' +
          'or remove it (`sondage purge <campaign> --aws`) and start it again',
      );
    }
    this.layoutChecked.add(id);
  }

  /** Items not done (pending or failed), in registration order. */
  async pendingItems(campaign: string, phase: string): Promise<Set<string>> {
    const rows = (await this.items(campaign, phase)).filter((r) => r.state !== 'done' && r.retired !== true);
    const seq = (r: Record<string, unknown>): number => (typeof r.seq === 'number' ? r.seq : Number.MAX_SAFE_INTEGER);
    rows.sort((a, b) => seq(a) - seq(b));
    return new Set(rows.map((r) => r.sk as string));
  }

  /**
   * The ids among `itemIds` not yet done (unregistered ids included), in the order given; items
   * failed permanently only with `retryFailed`.
   */
  async pendingAmong(campaign: string, { phase }: LedgerPartition, itemIds: readonly string[], options: PendingOptions = {}): Promise<Set<string>> {
    const retryFailed = options.retryFailed === true;
    await this.repairUnmarked(campaign, phase);
    // Distinct ids (a BatchGetItem refuses duplicate keys), 100 a request, PENDING_CONCURRENCY in flight.
    const unique = [...new Set(itemIds)];
    const groups: string[][] = [];
    for (let i = 0; i < unique.length; i += BATCH_GET_KEYS) groups.push(unique.slice(i, i + BATCH_GET_KEYS));
    const done = new Set<string>();
    const projection = { ProjectionExpression: 'sk, #s, permanent', ExpressionAttributeNames: { '#s': 'state' } };
    await inParallel(groups, PENDING_CONCURRENCY, (group) =>
      this.getAll('pendingAmong', campaign, phase, group, projection, (r) => {
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
  async commitPart(commit: PartCommit): Promise<void> {
    assertAmount('part cost', commit.costUsd);
    const { campaign, phase, partKey } = commit;
    const closeBatches = (commit as PartCommit & { closeBatches?: readonly string[] }).closeBatches ?? [];
    if (closeBatches.length > MAX_TX_RESERVATIONS) throw new SondageError(`commitPart ${partKey}: at most ${MAX_TX_RESERVATIONS} batches close in one part`);
    let reservations = [...(commit.reservationIds ?? [])];
    if (reservations.length + closeBatches.length > MAX_TX_RESERVATIONS) reservations = await this.mergeReservations(campaign, partKey, reservations);

    const partItem: TxItem = {
      Put: {
        TableName: this.ledgerTable,
        Item: { pk: partPk(campaign, phase), sk: partKey, model: commit.model, language: commit.language, cost_usd: commit.costUsd, marked: false, done_count: commit.done.length, failed_count: commit.failed.length + (commit.failedPermanently?.length ?? 0) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
    const now = Math.floor(Date.now() / 1000);
    const batchItems: TxItem[] = closeBatches.map((id) => ({
      Update: {
        TableName: this.ledgerTable,
        Key: { pk: batchPk(campaign), sk: id },
        UpdateExpression: 'SET #s = :closed, #ttl = :ttl',
        ExpressionAttributeNames: { '#s': 'state', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':closed': 'closed', ':ttl': now + CLOSED_BATCH_TTL_S },
      },
    }));
    // The marks go down first and the transaction names them: a commit is never left with its items pending (dynamo/partMarks.ts).
    const chunks = await writeMarkChunks(this.db, this.ledgerTable, campaign, phase, partKey, marksOf(commit));
    const unmarked = unmarkedPut(this.ledgerTable, campaign, phase, partKey, chunks);
    const codes = await this.settleMany(campaign, reservations, commit.costUsd, [partItem, unmarked, ...batchItems], commit.possiblyBilledUsd ?? 0);
    if (codes !== undefined) {
      if (codes[0] === 'ConditionalCheckFailed') {
        const existing = await this.db.send(new GetCommand({ TableName: this.ledgerTable, Key: { pk: partPk(campaign, phase), sk: partKey }, ConsistentRead: true }));
        if (existing.Item && existing.Item.marked !== true) await this.markItems(commit);
        throw new PartCommittedError(
          `part ${partKey} of campaign ${JSON.stringify(campaign)} phase ${JSON.stringify(phase)} is already committed; ` +
            'a part is adopted once (write new replies to a new part name)',
          partKey,
        );
      }
      if (codes.at(-1) === 'ConditionalCheckFailed') throw this.noBudget(campaign);
      throw new SondageError(`commitPart ${partKey}: transaction cancelled (${codes.join(', ')})`);
    }
    await this.markItems(commit);
  }

  /** Folds many reservations into one (budget-neutral: reserved is unchanged), so a commit fits one transaction. */
  private async mergeReservations(campaign: string, partKey: string, ids: readonly string[]): Promise<string[]> {
    const merged = `${partKey}#merged`;
    for (let i = 0; i < ids.length; i += 50) {
      for (;;) {
        const chunk = ids.slice(i, i + 50);
        const amounts = await Promise.all(chunk.map(async (id) => [id, await this.reservationAmount(campaign, id)] as const));
        const present = amounts.filter((a): a is readonly [string, number] => a[1] !== undefined);
        if (present.length === 0) break;
        const sum = present.reduce((s, [, a]) => s + a, 0);
        const codes = await this.transact([
          ...present.map(
            ([id, a]): TxItem => ({
              Delete: { TableName: this.budgetTable, Key: reservationKey(campaign, id), ConditionExpression: 'amount_usd = :a', ExpressionAttributeValues: { ':a': a } },
            }),
          ),
          {
            Update: {
              TableName: this.budgetTable,
              Key: reservationKey(campaign, merged),
              UpdateExpression: 'ADD amount_usd :s SET run_id = if_not_exists(run_id, :run)',
              ExpressionAttributeValues: { ':s': sum, ':run': this.runIds.get(campaign) ?? this.defaultRunId },
            },
          },
        ]);
        if (codes === undefined) break;
      }
    }
    return [merged];
  }

  /**
   * Marks the items of every part of a phase committed and left unmarked (a writer killed or
   * throttled between its commit and its last mark), before anyone reads what is pending there.
   */
  private async repairUnmarked(campaign: string, phase: string): Promise<void> {
    for (const { partKey, chunks } of await unmarkedParts(this.db, this.ledgerTable, campaign, phase)) {
      const marks = await readMarks(this.db, this.ledgerTable, campaign, phase, partKey, chunks);
      await this.markItems({ campaign, phase, partKey, ...marks });
    }
  }

  private async markItems(commit: Pick<PartCommit, 'campaign' | 'phase' | 'partKey' | 'done' | 'failed' | 'failedPermanently'> & Partial<Pick<PartCommit, 'model' | 'language'>>): Promise<void> {
    const { campaign, phase, partKey } = commit;
    await this.assertItemLayout(campaign, phase);
    // What the marks move, for the partition's counters (dynamo/counters.ts): each item's state
    // before this part first moved it, and the state this part leaves it in.
    const moved = new Map<string, { from: CountedState; to: CountedState }>();
    // `permanent` as the embedded ledger's column: the last attempt decides whether a run asks again.
    const mark = (state: 'done' | 'failed', permanent = false) => async (id: string) => {
      const key = { pk: itemPk(campaign, phase, id), sk: id };
      const values = { ':done': 'done', ':state': state, ':part': partKey, ':perm': permanent };
      try {
        const out = await this.db.send(
          new UpdateCommand({
            TableName: this.ledgerTable,
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
        const got = (await this.db.send(new GetCommand({ TableName: this.ledgerTable, Key: key, ConsistentRead: true }))).Item;
        if (got?.part_key !== partKey) return;
        let to = got.state as CountedState;
        if (to !== 'done') {
          try {
            await this.db.send(
              new UpdateCommand({ TableName: this.ledgerTable, Key: key, ConditionExpression: '#s <> :done AND part_key = :part', UpdateExpression: 'SET #s = :state, permanent = :perm', ExpressionAttributeNames: { '#s': 'state' }, ExpressionAttributeValues: values }),
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
    const where = commit.model !== undefined && commit.language !== undefined ? { model: commit.model, language: commit.language } : await this.partPartition(campaign, phase, partKey);
    const counted = where ? counterUpdate(this.ledgerTable, campaign, phase, where.model, where.language, delta) : undefined;
    const marked: TxItem = {
      Update: {
        TableName: this.ledgerTable,
        Key: { pk: partPk(campaign, phase), sk: partKey },
        UpdateExpression: 'SET marked = :t',
        ConditionExpression: 'marked <> :t',
        ExpressionAttributeValues: { ':t': true },
      },
    };
    const codes = await this.transact(counted ? [marked, counted] : [marked]);
    if (codes !== undefined && codes[0] !== 'ConditionalCheckFailed') throw new SondageError(`commitPart ${partKey}: marking its items was cancelled (${codes.join(', ')})`);
    await this.db.send(new DeleteCommand({ TableName: this.ledgerTable, Key: unmarkedKey(campaign, phase, partKey) }));
  }

  /** The partition of a committed part, as its record holds it (records of an older sondage: from its key). */
  private async partPartition(campaign: string, phase: string, partKey: string): Promise<{ model: string; language: string } | undefined> {
    const got = (await this.db.send(new GetCommand({ TableName: this.ledgerTable, Key: { pk: partPk(campaign, phase), sk: partKey }, ConsistentRead: true }))).Item;
    if (typeof got?.model === 'string' && typeof got.language === 'string') return { model: got.model, language: got.language };
    const parsed = parsePartKey(partKey);
    return parsed ? { model: parsed.model, language: parsed.language } : undefined;
  }

  async committedParts(campaign: string, phase: string): Promise<Set<string>> {
    const rows = await this.queryAll({ TableName: this.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': partPk(campaign, phase) }, ConsistentRead: true });
    return new Set(rows.map((r) => r.sk as string));
  }

  /**
   * A phase's counts from its partitions' counters (dynamo/counters.ts): one GetItem and one Query
   * of a row per partition, whatever the number of items; a phase registered before counters
   * existed is counted from its item rows.
   */
  async counts(campaign: string, phase: string): Promise<{ pending: number; done: number; failed: number }> {
    await this.repairUnmarked(campaign, phase);
    const seq = await this.db.send(new GetCommand({ TableName: this.ledgerTable, Key: { pk: `SEQ#${campaign}#${phase}`, sk: 'SEQ' }, ConsistentRead: true }));
    if (seq.Item?.counted === true) {
      const sum = { registered: 0, done: 0, failed: 0 };
      for (const c of await readCounters(this.db, this.ledgerTable, campaign, phase)) {
        sum.registered += c.registered;
        sum.done += c.done;
        sum.failed += c.failed;
      }
      return { pending: sum.registered - sum.done - sum.failed, done: sum.done, failed: sum.failed };
    }
    return this.countRows(campaign, phase);
  }

  /** Counts read from every item row of a phase (a phase without counters). */
  async countRows(campaign: string, phase: string): Promise<{ pending: number; done: number; failed: number }> {
    const out = { pending: 0, done: 0, failed: 0 };
    for (const r of await this.items(campaign, phase)) {
      if (r.retired === true) continue;
      const state = r.state as keyof typeof out;
      if (state in out) out[state]++;
    }
    return out;
  }

  async recordBatch(r: BatchRecord): Promise<void> {
    const put: TxItem = {
      Update: {
        TableName: this.ledgerTable,
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
    if (r.submissionKey !== undefined) items.push({ Delete: { TableName: this.ledgerTable, Key: { pk: batchPk(r.campaign), sk: `${INTENT_PREFIX}${r.submissionKey}` } } });
    const codes = await this.transact(items);
    if (codes === undefined) return;
    if (codes[0] === 'ConditionalCheckFailed') {
      throw new SondageError(`batch ${JSON.stringify(r.batchId)} of campaign ${JSON.stringify(r.campaign)} is already recorded`);
    }
    throw new SondageError(`recordBatch ${JSON.stringify(r.batchId)} of campaign ${JSON.stringify(r.campaign)} was cancelled: ${codes.join(', ')}`);
  }

  private async batchRows(campaign: string): Promise<Record<string, unknown>[]> {
    const rows = await this.queryAll({ TableName: this.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': batchPk(campaign) }, ConsistentRead: true });
    return rows.sort((a, b) => (a.created_at as number) - (b.created_at as number));
  }

  /** Open batches of one partition, oldest first. */
  async openBatches(campaign: string, phase: string, model: string, language: string): Promise<BatchRecord[]> {
    return (await this.batchRows(campaign))
      .filter((b) => b.state === 'open' && b.phase === phase && b.model === model && b.language === language)
      .map((b) => recordOf(campaign, b));
  }

  /** Open batches of every partition of a campaign, oldest first. */
  async campaignBatches(campaign: string): Promise<BatchRecord[]> {
    return (await this.batchRows(campaign)).filter((b) => b.state === 'open').map((b) => recordOf(campaign, b));
  }

  async markBatchCancelled(campaign: string, batchId: string, at: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.ledgerTable,
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

  async recordBatchIntent(i: BatchIntent): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.ledgerTable,
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

  async batchIntents(campaign: string, phase: string, model: string, language: string): Promise<BatchIntent[]> {
    return (await this.campaignBatchIntents(campaign)).filter((i) => i.phase === phase && i.model === model && i.language === language);
  }

  async campaignBatchIntents(campaign: string): Promise<BatchIntent[]> {
    return (await this.batchRows(campaign)).filter((b) => b.state === 'intent').map((b) => intentOf(campaign, b));
  }

  async dropBatchIntent(campaign: string, submissionKey: string): Promise<void> {
    const key = { pk: batchPk(campaign), sk: `${INTENT_PREFIX}${submissionKey}` };
    const out = await this.db.send(new GetCommand({ TableName: this.ledgerTable, Key: key, ConsistentRead: true }));
    if (!out.Item) return;
    // Release first: a crash in between leaves an intent whose reservation is gone, which the
    // next drop finishes (release of a missing reservation is a no-op).
    await this.release(campaign, out.Item.reservation_id as string);
    await this.db.send(new DeleteCommand({ TableName: this.ledgerTable, Key: key }));
  }

  /**
   * Records a failed step of a campaign execution (the state machine's "Record failure" state), so
   * `sondage status` can show it after the execution's history has expired.
   */
  async recordFailure(failure: ExecutionFailure): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.ledgerTable,
        Key: { pk: `FAILURE#${failure.campaign}`, sk: `${failure.at}#${failure.execution}` },
        UpdateExpression: 'SET execution_id = :e, #err = :err, #cause = :cause',
        ExpressionAttributeNames: { '#err': 'error', '#cause': 'cause' },
        ExpressionAttributeValues: { ':e': failure.execution, ':err': failure.error, ':cause': failure.cause },
      }),
    );
  }

  /** Recorded failures of a campaign, oldest first. */
  async failures(campaign: string): Promise<ExecutionFailure[]> {
    const rows = await this.queryAll({ TableName: this.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': `FAILURE#${campaign}` }, ConsistentRead: true });
    return rows.map((r) => ({
      campaign,
      execution: r.execution_id as string,
      at: (r.sk as string).split('#')[0]!,
      error: r.error as string,
      cause: r.cause as string,
    }));
  }

  async close(): Promise<void> {
    this.raw.destroy();
  }
}
