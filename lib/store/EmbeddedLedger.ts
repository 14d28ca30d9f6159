/**
 * The ledger on one machine (the Ledger interface of types.ts, whose other implementation is
 * DynamoLedger). This class is a facade: each concern lives in its own file under embedded/, cut
 * the same way as the DynamoDB ledger's dynamo/ so that one backend reads against the other —
 * budget.ts (budget and reservations), items.ts (registration, pending items, part commits),
 * batches.ts (provider batches and intents), partitions.ts (the design's partitions) — and
 * schema.ts holds the file they share: its tables, migrations and opening.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { BatchIntent, BatchRecord, BudgetState, ItemCounts, Ledger, LedgerPartition, PartCommit, PartitionRecord, PendingOptions, ReservationScope } from './types.js';
import { EmbeddedBatches } from './embedded/batches.js';
import { EmbeddedBudget } from './embedded/budget.js';
import { EmbeddedItems } from './embedded/items.js';
import { EmbeddedPartitions } from './embedded/partitions.js';
import { openLedgerDb } from './embedded/schema.js';

export interface EmbeddedLedgerOptions {
  /** How long a write waits for another process's lock, in ms (SQLite busy_timeout). Default 30 s. */
  readonly busyTimeoutMs?: number;
  /** Run id used for reservations of campaigns this instance did not `initCampaign`. */
  readonly runId?: string;
}

/**
 * The ledger on one machine: item states and the campaign budget in SQLite
 * (`<dataDir>/ledger.sqlite`, WAL). The budget protocol of DESIGN.md "Cost and safety rails"
 * runs as SQLite write transactions taken up front (BEGIN IMMEDIATE), so neither async workers in
 * one process nor several processes on the same file can push spending past the cap.
 *
 * @example
 * const ledger = new EmbeddedLedger('./data');
 * await ledger.initCampaign('demo', 5, runId);
 * if (await ledger.reserve('demo', callId, maxCost)) { …call…; await ledger.settle('demo', callId, cost); }
 */
export class EmbeddedLedger implements Ledger {
  readonly file: string;
  private readonly db: Database.Database;
  private readonly defaultRunId: string;
  private readonly runIds = new Map<string, string>();
  private readonly budgetRows: EmbeddedBudget;
  private readonly batchRows: EmbeddedBatches;
  private readonly itemRows: EmbeddedItems;
  private readonly partitionRows: EmbeddedPartitions;

  constructor(dataDir: string, options: EmbeddedLedgerOptions = {}) {
    mkdirSync(dataDir, { recursive: true });
    this.file = path.join(path.resolve(dataDir), 'ledger.sqlite');
    this.defaultRunId = options.runId ?? `${process.pid}-${randomUUID()}`;
    this.db = openLedgerDb(this.file, options.busyTimeoutMs ?? 30_000);
    this.budgetRows = new EmbeddedBudget(this.db, this.file);
    this.batchRows = new EmbeddedBatches(this.db, this.budgetRows);
    this.itemRows = new EmbeddedItems(this.db, this.budgetRows, this.batchRows);
    this.partitionRows = new EmbeddedPartitions(this.db, this.itemRows);
  }

  private runIdFor(campaign: string): string {
    return this.runIds.get(campaign) ?? this.defaultRunId;
  }

  // ---- budget and reservations (embedded/budget.ts)

  /** Creates the campaign's budget, or updates its cap; spending so far is kept across runs. */
  async initCampaign(campaign: string, capUsd: number, runId: string): Promise<void> {
    this.budgetRows.initCampaign(campaign, capUsd, runId);
    this.runIds.set(campaign, runId);
  }

  async budget(campaign: string): Promise<BudgetState> {
    return this.budgetRows.budget(campaign);
  }

  /** A provider's usage above what a call of `model` reserved, kept for `sondage status` (embedded/budget.ts). */
  async recordOverrun(campaign: string, model: string, excessUsd: number): Promise<void> {
    this.budgetRows.recordOverrun(campaign, model, excessUsd, new Date().toISOString());
  }

  /** The overrun recordOverrun kept: the last model, the excess added up, when. */
  async overrunOf(campaign: string): Promise<{ readonly model: string; readonly excessUsd: number; readonly at: string } | undefined> {
    return this.budgetRows.overrun(campaign);
  }

  async reserve(campaign: string, reservationId: string, amountUsd: number, scope?: ReservationScope): Promise<boolean> {
    return this.budgetRows.reserve(campaign, reservationId, this.runIdFor(campaign), amountUsd, scope);
  }

  async settle(campaign: string, reservationId: string, actualUsd: number): Promise<void> {
    this.budgetRows.settle(campaign, reservationId, actualUsd);
  }

  async release(campaign: string, reservationId: string): Promise<void> {
    this.budgetRows.release(campaign, reservationId);
  }

  async orphanStale(campaign: string, runId: string, mode: 'hold' | 'bill'): Promise<{ count: number; amountUsd: number }> {
    return this.budgetRows.orphanStale(campaign, runId, mode);
  }

  async resolveOrphans(
    campaign: string,
    partition: LedgerPartition,
    replied: ReadonlySet<string>,
    maxCostOf: (itemId: string) => number | undefined,
  ): Promise<{ resolved: number; billedUsd: number }> {
    return this.budgetRows.resolveOrphans(campaign, partition, replied, maxCostOf);
  }

  /**
   * The item ids the orphaned reservations of a partition name (what `resolveOrphans` will ask
   * `maxCostOf` about): for a caller that must look the costs up before the call, a partition
   * thread whose ledger calls cross to the main thread (lib/run/threadLedger.ts).
   */
  async orphanedItemIds(campaign: string, partition: LedgerPartition): Promise<string[]> {
    return this.budgetRows.orphanedItemIds(campaign, partition);
  }

  async inFlight(campaign: string): Promise<Map<string, number>> {
    return this.budgetRows.inFlight(campaign);
  }

  // ---- the design's partitions (embedded/partitions.ts)

  /** Registers a partition's ids a slice at a time, letting other calls run between them (embedded/partitions.ts). */
  async registerPartition(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    return this.partitionRows.registerPartition(campaign, partition, itemIds);
  }

  async partitions(campaign: string): Promise<PartitionRecord[]> {
    return this.partitionRows.partitions(campaign);
  }

  // ---- items, parts and counts (embedded/items.ts)

  async registerItems(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    this.itemRows.registerItems(campaign, partition, itemIds);
  }

  async hasItems(campaign: string, partition: LedgerPartition): Promise<boolean> {
    return this.itemRows.hasItems(campaign, partition);
  }

  async recordPartition(campaign: string, partition: LedgerPartition, items: number, idsDigest: string): Promise<void> {
    this.partitionRows.recordPartition(campaign, partition, items, idsDigest);
  }

  async pendingItems(campaign: string, phase: string): Promise<Set<string>> {
    return this.itemRows.pendingItems(campaign, phase);
  }

  /**
   * The ids among `itemIds` not yet done (unregistered ids included), in the order given; items
   * failed permanently only with `retryFailed`.
   */
  async pendingAmong(campaign: string, partition: LedgerPartition, itemIds: readonly string[], options: PendingOptions = {}): Promise<Set<string>> {
    return this.itemRows.pendingAmong(campaign, partition, itemIds, options);
  }

  async commitPart(commit: PartCommit): Promise<void> {
    this.itemRows.commitPart(commit);
  }

  async committedParts(campaign: string, phase: string): Promise<Set<string>> {
    return this.itemRows.committedParts(campaign, phase);
  }

  async counts(campaign: string, phase: string): Promise<ItemCounts> {
    return this.itemRows.counts(campaign, phase);
  }

  async phaseCounts(campaign: string, phases: readonly string[]): Promise<Map<string, ItemCounts>> {
    return this.itemRows.phaseCounts(campaign, phases);
  }

  // ---- provider batches (embedded/batches.ts)
  // One typed forwarder per Ledger method, as in DynamoLedger: the interface is the contract.

  async recordBatch(r: BatchRecord): Promise<void> {
    this.batchRows.recordBatch(r);
  }

  async openBatches(campaign: string, phase: string, model: string, language: string): Promise<BatchRecord[]> {
    return this.batchRows.openBatches(campaign, phase, model, language);
  }

  async campaignBatches(campaign: string): Promise<BatchRecord[]> {
    return this.batchRows.campaignBatches(campaign);
  }

  async markBatchCancelled(campaign: string, batchId: string, at: string): Promise<void> {
    this.batchRows.markBatchCancelled(campaign, batchId, at);
  }

  async recordBatchIntent(i: BatchIntent): Promise<void> {
    this.batchRows.recordBatchIntent(i);
  }

  async batchIntents(campaign: string, phase: string, model: string, language: string): Promise<BatchIntent[]> {
    return this.batchRows.batchIntents(campaign, phase, model, language);
  }

  async campaignBatchIntents(campaign: string): Promise<BatchIntent[]> {
    return this.batchRows.campaignBatchIntents(campaign);
  }

  async dropBatchIntent(campaign: string, submissionKey: string): Promise<void> {
    this.batchRows.dropBatchIntent(campaign, submissionKey);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
