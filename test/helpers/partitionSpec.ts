import path from 'node:path';
import { costUsd } from '../../lib/pricing/pricing.js';
import type { ModelProvider, Price } from '../../lib/providers/types.js';
import type { RetryPolicy } from '../../lib/run/callWithRetry.js';
import type { PartSink, PartitionSpec } from '../../lib/run/partitionTypes.js';
import { itemMaxCost } from '../../lib/run/planCampaign.js';
import { Semaphore } from '../../lib/run/Semaphore.js';
import { EmbeddedLedger } from '../../lib/store/index.js';

/** What a partition test fixes once for all its cases: the campaign, what a call costs and how often it is tried. */
export interface PartitionBench {
  readonly campaign: string;
  readonly price: Price;
  readonly retry: RetryPolicy;
  readonly concurrency: number;
  readonly partRows: number;
  readonly readReply: PartitionSpec['readReply'];
}

/** What each case names itself; anything else in the spec may be overridden too. */
export type PartitionOver = { runId: string; ledger: EmbeddedLedger; sink: PartSink; provider: ModelProvider } & Partial<PartitionSpec>;

/** A local run's partition (English generate phase of model `alpha`) over `items`, journalled under `dir`. */
export function localPartitionSpec(bench: PartitionBench, dir: string, items: PartitionSpec['items'], over: PartitionOver): PartitionSpec {
  return {
    campaign: bench.campaign,
    phase: 'generate',
    model: 'alpha',
    language: 'en',
    items,
    price: bench.price,
    retry: bench.retry,
    readReply: bench.readReply,
    maxCost: (item) => itemMaxCost(item, bench.price),
    cost: (usage) => costUsd(bench.price, usage),
    journalDir: path.join(dir, 'journal'),
    semaphore: new Semaphore(bench.concurrency),
    chunkSize: 4,
    partRows: bench.partRows,
    stop: {},
    // The local run's partitions: whole, so a dead run's held reservations are resolved here.
    wholePartition: true,
    ...over,
  };
}

/** An embedded ledger under `dir` for run `runId`, with the campaign's cap set and a dead run's holds orphaned. */
export async function partitionLedger(dir: string, campaign: string, runId: string, cap = 10): Promise<EmbeddedLedger> {
  const ledger = new EmbeddedLedger(path.join(dir, 'ledger'), { runId });
  await ledger.initCampaign(campaign, cap, runId);
  await ledger.orphanStale(campaign, runId, 'hold');
  return ledger;
}
