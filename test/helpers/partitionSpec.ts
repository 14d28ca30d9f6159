import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, beforeEach } from 'vitest';
import type { PromptItem } from '../../lib/core/types.js';
import { costUsd } from '../../lib/pricing/pricing.js';
import type { GenerateRequest, GenerateResult, ModelProvider, Price, RetryDecision } from '../../lib/providers/types.js';
import type { RetryPolicy } from '../../lib/run/callWithRetry.js';
import type { PartSink, PartitionSpec } from '../../lib/run/partitionTypes.js';
import { itemMaxCost } from '../../lib/run/planCampaign.js';
import { Semaphore } from '../../lib/run/Semaphore.js';
import { EmbeddedLedger } from '../../lib/store/index.js';
import type { ReadingRow, ReplyRow } from '../../lib/store/types.js';
import { loadContext, RUN_FIXTURES, rootItems, useTempDir } from './campaigns.js';

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

/**
 * The first `count` English items of model `alpha` in the small run fixture, loaded once, and a fresh
 * folder for each test under one temp folder for the file: it registers the hooks every partition test
 * file would otherwise repeat. Read `.items` and `.dir` inside tests and hooks only.
 */
export function usePartitionCases(prefix: string, count: number): { readonly items: PromptItem[]; readonly dir: string } {
  const root = useTempDir(prefix, 'all');
  let items: PromptItem[] | undefined;
  let dir: string | undefined;
  let n = 0;
  beforeAll(async () => {
    const ctx = await loadContext(path.join(RUN_FIXTURES, 'small.yaml'));
    items = [...rootItems(ctx, ctx.campaign.models[0]!, 'en')].slice(0, count);
  });
  beforeEach(() => {
    dir = path.join(root.dir, `case-${n++}`);
  });
  return {
    get items(): PromptItem[] {
      if (items === undefined) throw new Error(`usePartitionCases('${prefix}'): .items read outside a test or hook`);
      return items;
    },
    get dir(): string {
      if (dir === undefined) throw new Error(`usePartitionCases('${prefix}'): .dir read outside a test or hook`);
      return dir;
    },
  };
}

/** Answers every call at once (`text` of the request, a short reply by default) and counts them: calls faster than anything a partition writes. */
export class InstantProvider implements ModelProvider {
  readonly id = 'fake/instant';
  readonly simulated = true;
  calls = 0;

  constructor(private readonly text: (req: GenerateRequest) => string = (req) => `reply to ${req.item!.item_id}`) {}

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    this.calls++;
    return { text: this.text(req), finish_reason: 'stop', usage: { input_tokens: 80, output_tokens: 10 } };
  }

  classifyError(): RetryDecision {
    return { retry: false, errorClass: 'fake' };
  }
}

/** Parts kept in memory by name; a part written again under its name replaces the old one. */
export class MemoryPartSink implements PartSink {
  readonly replies = new Map<string, ReplyRow[]>();
  readonly readings = new Map<string, ReadingRow[]>();

  async writeReplies(journalPath: string, partName: string): Promise<string> {
    const text = await readFile(journalPath, 'utf8');
    const rows = text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as ReplyRow);
    this.replies.set(this.partKey(partName), rows);
    return this.partKey(partName);
  }

  async writeReadings(rows: readonly ReadingRow[], partName: string): Promise<void> {
    this.readings.set(partName, [...rows]);
  }

  partKey(partName: string): string {
    return `replies/${partName}`;
  }

  rows(): ReplyRow[] {
    return [...this.replies.values()].flat();
  }
}
