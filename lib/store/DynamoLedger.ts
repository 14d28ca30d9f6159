/**
 * The ledger on DynamoDB (DESIGN.md "Cost and safety rails"; the Ledger interface of types.ts, whose
 * other implementation is EmbeddedLedger). Loaded lazily by the Lambda workers and the CLI's `--aws`
 * commands, not re-exported from lib/store/index.ts.
 *
 * This class is a facade: each concern lives in its own file under dynamo/, cut the same way as the
 * embedded ledger's embedded/ so that one backend reads against the other — budget.ts (budget,
 * reservations, fence), items.ts (registration, pending items, part commits and item marks),
 * batches.ts (provider batches and intents), partitions.ts (the design's partitions), and, AWS
 * only, failures.ts (failed execution steps), leases.ts (live workers), counters.ts (per-partition
 * item counts) and partMarks.ts (a commit's item marks written down first); keys.ts builds every
 * key, context.ts holds what they share.
 *
 * Budget table (pk = campaign): `BUDGET` holds cap, spent, reserved, possibly billed (calls of
 * killed runs that left no reply), orphaned (the part of reserved a killed run holds), headroom =
 * cap − spent − reserved − possibly billed, and the fence; `RES#<id>` one reservation, with its
 * partition and items.
 *
 * Ledger table: `ITEM#<c>#<phase>#<shard>` / item id (state, part, registration seq, model, language,
 * retired), the shard a hash of the item id (ITEM_SHARDS); `PARTITION#<c>` / `<phase>#<model>#<language>` a registered partition; `PART#<c>#<phase>` /
 * part key; `LEASE#<c>` / holder a live worker's lease (dynamo/leases.ts); `MARKS#<c>#<phase>` / `<part key>#<n>` and `UNMARKED#<c>#<phase>` / part key the item marks
 * of a committed part until they are made (dynamo/partMarks.ts); `COUNT#<c>#<phase>` / `<model>#<language>` a partition's counters (dynamo/counters.ts);
 * `BATCH#<c>` / batch id, and `BATCH#<c>` / `INTENT#<submission key>` a batch about to be
 * created; `SEQ#<c>#<phase>` / `SEQ` the registration counter; `FAILURE#<c>` / `<at>#<execution>` a failed step.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { BatchIntent, BatchRecord, BudgetState, ItemCounts, Ledger, LedgerPartition, PartCommit, PartitionRecord, PendingOptions, ReservationScope } from './types.js';
import { runIdOf } from './dynamo/context.js';
import type { DynamoContext } from './dynamo/context.js';
import * as budgetOps from './dynamo/budget.js';
import * as itemOps from './dynamo/items.js';
import * as batchOps from './dynamo/batches.js';
import * as partitionOps from './dynamo/partitions.js';
import * as failureOps from './dynamo/failures.js';
import type { ExecutionFailure } from './dynamo/failures.js';
import { dropLease, liveLeases, putLease } from './dynamo/leases.js';

export type { ExecutionFailure } from './dynamo/failures.js';
export { ITEM_SHARDS, itemShard } from './dynamo/keys.js';

export interface DynamoLedgerOptions {
  readonly ledgerTable: string;
  readonly budgetTable: string;
  readonly client?: DynamoDBClient;
  readonly clientConfig?: DynamoDBClientConfig;
  /** Run id for reservations of campaigns this instance did not `initCampaign` (a Lambda worker). */
  readonly runId?: string;
}

/**
 * @example
 * const ledger = new DynamoLedger({ ledgerTable: process.env.SONDAGE_LEDGER_TABLE!, budgetTable: process.env.SONDAGE_BUDGET_TABLE! });
 * if (await ledger.reserve('demo', callId, maxCost)) { …call…; await ledger.settle('demo', callId, cost); }
 */
export class DynamoLedger implements Ledger {
  private readonly raw: DynamoDBClient;
  private readonly ctx: DynamoContext;
  /** Campaigns whose fence refused a reservation of this ledger, with the fence found. */
  readonly fencedOut: Map<string, string>;

  constructor(options: DynamoLedgerOptions) {
    this.raw = options.client ?? new DynamoDBClient(options.clientConfig ?? {});
    this.ctx = {
      db: DynamoDBDocumentClient.from(this.raw, { marshallOptions: { removeUndefinedValues: true } }),
      ledgerTable: options.ledgerTable,
      budgetTable: options.budgetTable,
      runIds: new Map(),
      explicitRun: options.runId !== undefined,
      defaultRunId: options.runId ?? `lambda-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
      fencedOut: new Map(),
      layoutChecked: new Set(),
    };
    this.fencedOut = this.ctx.fencedOut;
  }

  // ---- budget, reservations and the fence (dynamo/budget.ts)

  /** Creates the campaign's budget, or updates its cap; spending so far is kept across runs. */
  async initCampaign(campaign: string, capUsd: number, runId: string): Promise<void> {
    return budgetOps.initCampaign(this.ctx, campaign, capUsd, runId);
  }

  /**
   * Moves the campaign's fence to `token` (`sondage stop --aws`; a plan's initCampaign moves it to
   * its execution): from the next reservation on, only a ledger whose run id is the fence may
   * reserve, so workers of an earlier generation, still running for up to their Lambda timeout,
   * stop at their next chunk. Settling and committing what they already reserved is not fenced:
   * calls already sent are counted. Returns false when the campaign has no budget (never planned).
   */
  async fence(campaign: string, token: string): Promise<boolean> {
    return budgetOps.fence(this.ctx, campaign, token);
  }

  /** Ledger.flagOverrun: stops every worker of the campaign and adds the excess up beside the model (dynamo/budget.ts). */
  async flagOverrun(campaign: string, model: string, excessUsd: number): Promise<void> {
    return budgetOps.flagOverrun(this.ctx, campaign, model, excessUsd);
  }

  /** The overrun flagOverrun recorded (the last model, the excess added up, when): what `status --aws` shows. */
  async overrunOf(campaign: string): Promise<{ readonly model: string; readonly excessUsd: number; readonly at: string } | undefined> {
    return budgetOps.overrunOf(this.ctx, campaign);
  }

  /** The fence when it names another run than this ledger's: its reservations are refused. */
  async fencedOutBy(campaign: string): Promise<string | undefined> {
    return budgetOps.fencedOutBy(this.ctx, campaign);
  }

  /** The campaign's fence: the run allowed to reserve, or a stop's token; undefined before any plan set one. */
  async fenceOf(campaign: string): Promise<string | undefined> {
    return budgetOps.fenceOf(this.ctx, campaign);
  }

  async budget(campaign: string): Promise<BudgetState> {
    return budgetOps.budget(this.ctx, campaign);
  }

  async reserve(campaign: string, reservationId: string, amountUsd: number, scope?: ReservationScope): Promise<boolean> {
    return budgetOps.reserve(this.ctx, campaign, reservationId, amountUsd, scope);
  }

  async settle(campaign: string, reservationId: string, actualUsd: number): Promise<void> {
    return budgetOps.settle(this.ctx, campaign, reservationId, actualUsd);
  }

  async release(campaign: string, reservationId: string): Promise<void> {
    return budgetOps.release(this.ctx, campaign, reservationId);
  }

  /** Reservations of other runs, except those holding an open provider batch or an intent (Ledger.orphanStale). */
  async orphanStale(campaign: string, runId: string, mode: 'hold' | 'bill'): Promise<{ count: number; amountUsd: number }> {
    return budgetOps.orphanStale(this.ctx, campaign, runId, mode);
  }

  async resolveOrphans(
    campaign: string,
    partition: LedgerPartition,
    replied: ReadonlySet<string>,
    maxCostOf: (itemId: string) => number | undefined,
  ): Promise<{ resolved: number; billedUsd: number }> {
    return budgetOps.resolveOrphans(this.ctx, campaign, partition, replied, maxCostOf);
  }

  async inFlight(campaign: string): Promise<Map<string, number>> {
    return budgetOps.inFlight(this.ctx, campaign);
  }

  // ---- live workers (dynamo/leases.ts)

  /** Ledger.heartbeat: this ledger's run holds a live worker (`holder`) until `untilMs` (dynamo/leases.ts). */
  async heartbeat(campaign: string, holder: string, untilMs: number): Promise<void> {
    await putLease(this.ctx.db, this.ctx.ledgerTable, campaign, holder, runIdOf(this.ctx, campaign), untilMs);
  }

  async endHeartbeat(campaign: string, holder: string): Promise<void> {
    await dropLease(this.ctx.db, this.ctx.ledgerTable, campaign, holder);
  }

  async liveHolders(campaign: string, exceptRunId: string): Promise<{ count: number; untilMs: number; runs: string[] }> {
    return liveLeases(this.ctx.db, this.ctx.ledgerTable, campaign, exceptRunId, Date.now());
  }

  // ---- the design's partitions (dynamo/partitions.ts)

  /** Ledger.registerPartition: nothing to do when the partition's digest is the recorded one. */
  async registerPartition(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    return partitionOps.registerPartition(this.ctx, campaign, partition, itemIds);
  }

  async partitions(campaign: string): Promise<PartitionRecord[]> {
    return partitionOps.partitions(this.ctx, campaign);
  }

  // ---- items, parts and counts (dynamo/items.ts)

  /** Registration in bulk: ids already known keep their state (dynamo/items.ts). */
  async registerItems(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    return itemOps.registerItems(this.ctx, campaign, partition, itemIds);
  }

  /** Items not done (pending or failed), in registration order. */
  async pendingItems(campaign: string, phase: string): Promise<Set<string>> {
    return itemOps.pendingItems(this.ctx, campaign, phase);
  }

  /**
   * The ids among `itemIds` not yet done (unregistered ids included), in the order given; items
   * failed permanently only with `retryFailed`.
   */
  async pendingAmong(campaign: string, partition: LedgerPartition, itemIds: readonly string[], options: PendingOptions = {}): Promise<Set<string>> {
    return itemOps.pendingAmong(this.ctx, campaign, partition, itemIds, options);
  }

  /** The part record and the budget move in one transaction; item states follow, idempotently (dynamo/items.ts). */
  async commitPart(commit: PartCommit): Promise<void> {
    return itemOps.commitPart(this.ctx, commit);
  }

  async committedParts(campaign: string, phase: string): Promise<Set<string>> {
    return itemOps.committedParts(this.ctx, campaign, phase);
  }

  /** A phase's counts from its partitions' counters (dynamo/counters.ts); from its item rows for a phase without them. */
  async counts(campaign: string, phase: string): Promise<ItemCounts> {
    return itemOps.counts(this.ctx, campaign, phase);
  }

  /** One phase after another: each reads its partitions' counters, a row per partition (dynamo/counters.ts). */
  async phaseCounts(campaign: string, phases: readonly string[]): Promise<Map<string, ItemCounts>> {
    const out = new Map<string, ItemCounts>();
    for (const phase of phases) out.set(phase, await itemOps.counts(this.ctx, campaign, phase));
    return out;
  }

  /** Counts read from every item row of a phase (a phase without counters). */
  async countRows(campaign: string, phase: string): Promise<ItemCounts> {
    return itemOps.countRows(this.ctx, campaign, phase);
  }

  // ---- provider batches (dynamo/batches.ts)
  // One typed forwarder per Ledger method (EmbeddedLedger and ThreadLedger read alike): a generic
  // forwarder would lose the interface's types, which are the backends' contract.

  async recordBatch(r: BatchRecord): Promise<void> {
    return batchOps.recordBatch(this.ctx, r);
  }

  /** Open batches of one partition, oldest first. */
  async openBatches(campaign: string, phase: string, model: string, language: string): Promise<BatchRecord[]> {
    return batchOps.openBatches(this.ctx, campaign, phase, model, language);
  }

  /** Open batches of every partition of a campaign, oldest first. */
  async campaignBatches(campaign: string): Promise<BatchRecord[]> {
    return batchOps.campaignBatches(this.ctx, campaign);
  }

  async markBatchCancelled(campaign: string, batchId: string, at: string): Promise<void> {
    return batchOps.markBatchCancelled(this.ctx, campaign, batchId, at);
  }

  async recordBatchIntent(i: BatchIntent): Promise<void> {
    return batchOps.recordBatchIntent(this.ctx, i);
  }

  async batchIntents(campaign: string, phase: string, model: string, language: string): Promise<BatchIntent[]> {
    return batchOps.batchIntents(this.ctx, campaign, phase, model, language);
  }

  async campaignBatchIntents(campaign: string): Promise<BatchIntent[]> {
    return batchOps.campaignBatchIntents(this.ctx, campaign);
  }

  async dropBatchIntent(campaign: string, submissionKey: string): Promise<void> {
    return batchOps.dropBatchIntent(this.ctx, campaign, submissionKey);
  }

  // ---- failed execution steps (dynamo/failures.ts)

  /** Records a failed step of a campaign execution, so `sondage status` can show it after the execution's history has expired. */
  async recordFailure(failure: ExecutionFailure): Promise<void> {
    return failureOps.recordFailure(this.ctx, failure);
  }

  /** Recorded failures of a campaign, oldest first. */
  async failures(campaign: string): Promise<ExecutionFailure[]> {
    return failureOps.failures(this.ctx, campaign);
  }

  async close(): Promise<void> {
    this.raw.destroy();
  }
}
