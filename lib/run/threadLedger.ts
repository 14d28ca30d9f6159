/**
 * The ledger of a partition thread: every call crosses to the main thread, which runs it on the
 * run's one SQLite connection. Two connections writing the same file wait on each other's write
 * locks (SQLite sleeps a millisecond or more per retry, and a part commit holds the lock for
 * tens), which cost the threads more than they gained; the main thread is otherwise idle while
 * threads run, and its transactions run one after the other, as they did before threads.
 */
import type { EmbeddedLedger } from '../store/EmbeddedLedger.js';
import type { BatchIntent, BatchRecord, BudgetState, ItemCounts, Ledger, LedgerPartition, PartCommit, PartitionRecord, PendingOptions, ReservationScope } from '../store/types.js';
import { rebuiltError, threadError } from './threadMessages.js';
import type { LedgerCall, LedgerReply } from './threadMessages.js';

/** Runs a thread's ledger call on the main thread's ledger; the reply goes back through `post`. */
export function serveLedgerCall(ledger: EmbeddedLedger, call: LedgerCall, post: (reply: LedgerReply) => void): void {
  const run = async (): Promise<unknown> => {
    if (call.method === 'orphanedItemIds') return ledger.orphanedItemIds(...(call.args as [string, LedgerPartition]));
    if (call.method === 'resolveOrphans') {
      // The costs were looked up in the thread, for the ids orphanedItemIds named.
      const [campaign, partition, replied, costs] = call.args as [string, LedgerPartition, ReadonlySet<string>, ReadonlyMap<string, number>];
      return ledger.resolveOrphans(campaign, partition, replied, (id) => costs.get(id));
    }
    const method = (ledger as unknown as Record<string, (...a: readonly unknown[]) => Promise<unknown>>)[call.method];
    if (typeof method !== 'function') throw new Error(`ledger has no method ${call.method}`);
    return method.apply(ledger, [...call.args]);
  };
  run().then(
    (value) => post({ type: 'ledgerReply', id: call.id, ok: true, value }),
    (err: unknown) => post({ type: 'ledgerReply', id: call.id, ok: false, error: threadError(err) }),
  );
}

/**
 * The thread's side: a Ledger whose calls are answered by serveLedgerCall on the main thread. One
 * typed method per Ledger method, alike by design: a Proxy would lose the interface's types.
 */
export class ThreadLedger implements Ledger {
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  constructor(private readonly send: (call: LedgerCall) => void) {}

  /** Hands a reply from the main thread to the call waiting for it. */
  receive(reply: LedgerReply): void {
    const w = this.waiting.get(reply.id);
    this.waiting.delete(reply.id);
    if (reply.ok) w?.resolve(reply.value);
    else w?.reject(rebuiltError(reply.error));
  }

  private call<T>(method: string, ...args: readonly unknown[]): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.send({ type: 'ledger', id, method, args });
    });
  }

  initCampaign(campaign: string, capUsd: number, runId: string): Promise<void> {
    return this.call('initCampaign', campaign, capUsd, runId);
  }
  budget(campaign: string): Promise<BudgetState> {
    return this.call('budget', campaign);
  }
  reserve(campaign: string, reservationId: string, amountUsd: number, scope?: ReservationScope): Promise<boolean> {
    return this.call('reserve', campaign, reservationId, amountUsd, scope);
  }
  settle(campaign: string, reservationId: string, actualUsd: number): Promise<void> {
    return this.call('settle', campaign, reservationId, actualUsd);
  }
  release(campaign: string, reservationId: string): Promise<void> {
    return this.call('release', campaign, reservationId);
  }
  orphanStale(campaign: string, runId: string, mode: 'hold' | 'bill'): Promise<{ readonly count: number; readonly amountUsd: number }> {
    return this.call('orphanStale', campaign, runId, mode);
  }
  async resolveOrphans(
    campaign: string,
    partition: LedgerPartition,
    replied: ReadonlySet<string>,
    maxCostOf: (itemId: string) => number | undefined,
  ): Promise<{ readonly resolved: number; readonly billedUsd: number }> {
    // maxCostOf cannot cross threads: its answers for the ids that matter do.
    const ids = await this.call<string[]>('orphanedItemIds', campaign, partition);
    const costs = new Map<string, number>();
    for (const id of ids) {
      const cost = maxCostOf(id);
      if (cost !== undefined) costs.set(id, cost);
    }
    return this.call('resolveOrphans', campaign, partition, replied, costs);
  }
  inFlight(campaign: string): Promise<Map<string, number>> {
    return this.call('inFlight', campaign);
  }
  registerPartition(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    return this.call('registerPartition', campaign, partition, itemIds);
  }
  partitions(campaign: string): Promise<PartitionRecord[]> {
    return this.call('partitions', campaign);
  }
  registerItems(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    return this.call('registerItems', campaign, partition, itemIds);
  }
  hasItems(campaign: string, partition: LedgerPartition): Promise<boolean> {
    return this.call('hasItems', campaign, partition);
  }
  recordPartition(campaign: string, partition: LedgerPartition, items: number, idsDigest: string): Promise<void> {
    return this.call('recordPartition', campaign, partition, items, idsDigest);
  }
  pendingItems(campaign: string, phase: string): Promise<Set<string>> {
    return this.call('pendingItems', campaign, phase);
  }
  pendingAmong(campaign: string, partition: LedgerPartition, itemIds: readonly string[], options?: PendingOptions): Promise<Set<string>> {
    return this.call('pendingAmong', campaign, partition, itemIds, options);
  }
  commitPart(commit: PartCommit): Promise<void> {
    return this.call('commitPart', commit);
  }
  committedParts(campaign: string, phase: string): Promise<Set<string>> {
    return this.call('committedParts', campaign, phase);
  }
  counts(campaign: string, phase: string): Promise<ItemCounts> {
    return this.call('counts', campaign, phase);
  }
  phaseCounts(campaign: string, phases: readonly string[]): Promise<Map<string, ItemCounts>> {
    return this.call('phaseCounts', campaign, phases);
  }
  recordBatch(record: BatchRecord): Promise<void> {
    return this.call('recordBatch', record);
  }
  openBatches(campaign: string, phase: string, model: string, language: string): Promise<BatchRecord[]> {
    return this.call('openBatches', campaign, phase, model, language);
  }
  campaignBatches(campaign: string): Promise<BatchRecord[]> {
    return this.call('campaignBatches', campaign);
  }
  markBatchCancelled(campaign: string, batchId: string, at: string): Promise<void> {
    return this.call('markBatchCancelled', campaign, batchId, at);
  }
  recordBatchIntent(intent: BatchIntent): Promise<void> {
    return this.call('recordBatchIntent', intent);
  }
  batchIntents(campaign: string, phase: string, model: string, language: string): Promise<BatchIntent[]> {
    return this.call('batchIntents', campaign, phase, model, language);
  }
  campaignBatchIntents(campaign: string): Promise<BatchIntent[]> {
    return this.call('campaignBatchIntents', campaign);
  }
  dropBatchIntent(campaign: string, submissionKey: string): Promise<void> {
    return this.call('dropBatchIntent', campaign, submissionKey);
  }
  async close(): Promise<void> {
    // The connection is the main thread's: it closes it.
  }
}
