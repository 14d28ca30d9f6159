import { mkdirSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PromptItem } from '../../lib/core/types.js';
import { costUsd } from '../../lib/pricing/pricing.js';
import type { GenerateRequest, GenerateResult, ModelProvider, Price, RetryDecision } from '../../lib/providers/types.js';
import { itemMaxCost } from '../../lib/run/planCampaign.js';
import type { PartSink, PartitionSpec } from '../../lib/run/partitionTypes.js';
import { runPartition } from '../../lib/run/runPartition.js';
import { Semaphore } from '../../lib/run/Semaphore.js';
import { EmbeddedLedger, readParquet, tableGlob } from '../../lib/store/index.js';
import { StorageError } from '../../lib/store/storageErrors.js';
import type { ReplyRow } from '../../lib/store/types.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { partKey } from '../../lib/store/layout.js';
import { loadContext, RUN_FIXTURES, rootItems, tempDir, writeCampaign } from '../helpers/campaigns.js';

// A journal that cannot be written (a full disk) stops the partition: no further call is paid for
// a reply that could not be kept; the parts committed before stay, and the next run asks only the
// rest, each item answered once.

const CAMPAIGN = 'run-small';
const PRICE: Price = { input_per_mtok: 2, output_per_mtok: 10 };

class CountingProvider implements ModelProvider {
  readonly id = 'fake/counting';
  readonly simulated = true;
  calls = 0;
  constructor(private readonly onFirstCall: () => Promise<void> = async () => {}) {}
  async generate(req: GenerateRequest): Promise<GenerateResult> {
    if (++this.calls === 1) await this.onFirstCall();
    await tick();
    return { text: `reply to ${req.item!.item_id}`, finish_reason: 'stop', usage: { input_tokens: 90, output_tokens: 10 } };
  }
  classifyError(): RetryDecision {
    return { retry: false, errorClass: 'fake' };
  }
}

class MemorySink implements PartSink {
  readonly replies = new Map<string, ReplyRow[]>();
  async writeReplies(journalPath: string, partName: string): Promise<string> {
    const rows = (await readFile(journalPath, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as ReplyRow);
    this.replies.set(this.partKey(partName), rows);
    return this.partKey(partName);
  }
  async writeReadings(): Promise<void> {}
  partKey(partName: string): string {
    return `replies/${partName}`;
  }
}

let root: string;
let cleanup: () => Promise<void>;
let items: PromptItem[];
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('storage-stop'));
  const ctx = await loadContext(path.join(RUN_FIXTURES, 'small.yaml'));
  items = [...rootItems(ctx, ctx.campaign.models[0]!, 'en')].slice(0, 80);
});
afterAll(() => cleanup?.());

function spec(runId: string, ledger: EmbeddedLedger, sink: PartSink, provider: ModelProvider, stop: PartitionSpec['stop']): PartitionSpec {
  return {
    campaign: CAMPAIGN,
    phase: 'generate',
    model: 'alpha',
    language: 'en',
    runId,
    items,
    provider,
    price: PRICE,
    retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, timeoutMs: 30_000 },
    readReply: () => [],
    maxCost: (item) => itemMaxCost(item, PRICE),
    cost: (usage) => costUsd(PRICE, usage),
    journalDir: path.join(root, 'journal'),
    sink,
    ledger,
    semaphore: new Semaphore(4),
    chunkSize: 4,
    partRows: 16,
    stop,
  };
}

describe('a partition whose journal cannot be written', () => {
  it('stops calling, keeps what was committed, and the next run asks only the rest', async () => {
    // prepare: once the run is under way, the second part's journal cannot be created (a folder
    // stands where it would go: EISDIR, which no permission bit overrides).
    const ledger = new EmbeddedLedger(path.join(root, 'ledger'), { runId: 'run1' });
    await ledger.initCampaign(CAMPAIGN, 10, 'run1');
    const blocked = path.join(root, 'journal', 'run1-generate-00001.ndjson');
    const sink = new MemorySink();
    // Made at once, within the first call: an asynchronous mkdir raced the first part's 16 replies,
    // and when they won, the second journal was opened as a file before the folder was made there.
    const first = new CountingProvider(async () => void mkdirSync(blocked, { recursive: true }));
    const stop: PartitionSpec['stop'] = {};

    // act
    const err = await runPartition(spec('run1', ledger, sink, first, stop)).catch((e: unknown) => e);

    // assess: a StorageError naming the journal; far fewer calls than items; other partitions told to stop.
    expect(err).toBeInstanceOf(StorageError);
    expect((err as Error).message).toContain(`could not write ${blocked}`);
    expect(first.calls).toBeLessThan(items.length);
    expect(stop.reason).toBeDefined();
    const committed = (await ledger.counts(CAMPAIGN, 'generate')).done;
    expect(committed).toBeGreaterThanOrEqual(16);
    // Every call made was for a reply that could be kept: the chunks in flight when the journal
    // failed wrote to the part before it.
    expect(committed).toBe(first.calls);
    await ledger.close();

    // The folder is fixed; the next run asks only what was not committed.
    await rm(blocked, { recursive: true });
    const again = new EmbeddedLedger(path.join(root, 'ledger'), { runId: 'run2' });
    await again.initCampaign(CAMPAIGN, 10, 'run2');
    await again.orphanStale(CAMPAIGN, 'run2', 'hold');
    const second = new CountingProvider();
    // A whole partition: run2 asks exactly what run1 did not commit.
    const out = await runPartition({ ...spec('run2', again, sink, second, {}), wholePartition: true });
    expect(second.calls).toBe(items.length - committed);
    expect(out.pending).toBe(0);
    const ok = new Map<string, number>();
    for (const r of [...sink.replies.values()].flat()) if (r.status === 'ok') ok.set(r.item_id, (ok.get(r.item_id) ?? 0) + 1);
    expect(ok.size).toBe(items.length);
    expect([...ok.values()].every((n) => n === 1)).toBe(true);
    const budget = await again.budget(CAMPAIGN);
    expect(budget.reserved_usd).toBe(0);
    // The failed journal was known as it was opened, before any chunk was attached to it.
    expect(budget.possibly_billed_usd).toBe(0);
    await again.close();
  });
});

describe('a prompts part that cannot be written', () => {
  it('is reported once the calls it ran beside have settled: their replies are kept, and the next run writes it and asks nothing again', async () => {
    // prepare: a folder where alpha/en's generate prompts part goes (EISDIR on the rename into place).
    const dir = path.join(root, 'prompts-blocked');
    await mkdir(dir, { recursive: true });
    const file = await writeCampaign(dir, 'small.yaml');
    const dataDir = path.join(dir, 'data');
    const blocked = path.join(dataDir, partKey(CAMPAIGN, 'generate', 'prompts', 'alpha', 'en', 'part-plan.parquet'));
    await mkdir(blocked, { recursive: true });
    const asked: string[] = [];

    // act
    const err = await runCampaign(await loadContext(file), { dataDir, onReply: (r) => r.phase === 'generate' && asked.push(r.item_id) }).catch((e: unknown) => e);

    // assess: the error names the part; alpha/en's replies were stored all the same.
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain('part-plan.parquet');
    const stored = await readParquet<{ n: number }>(tableGlob(dataDir, CAMPAIGN, 'generate', 'replies'), "SELECT count(*) AS n FROM parts WHERE model = 'alpha' AND language = 'en'");
    expect(stored[0]!.n).toBeGreaterThan(0);

    // The next run writes the part and asks only what was not asked: each item once in all.
    await rm(blocked, { recursive: true });
    const again: string[] = [];
    await runCampaign(await loadContext(file), { dataDir, onReply: (r) => r.phase === 'generate' && again.push(r.item_id) });
    expect(again.filter((id) => asked.includes(id))).toEqual([]);
    const ledger = new EmbeddedLedger(dataDir, { runId: 'check' });
    expect((await ledger.counts(CAMPAIGN, 'generate')).done).toBe(new Set([...asked, ...again]).size);
    await ledger.close();
    const prompts = await readParquet<{ n: number }>(path.join(dataDir, partKey(CAMPAIGN, 'generate', 'prompts', 'alpha', 'en', 'part-plan.parquet')), 'SELECT count(*) AS n FROM parts');
    expect(prompts[0]!.n).toBeGreaterThan(0);
  });
});
