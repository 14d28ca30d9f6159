import { copyFile, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { seededRandom, seedFromKey } from '../../lib/core/hash.js';
import type { GenerateRequest, GenerateResult, ModelProvider, Price, RetryDecision } from '../../lib/providers/types.js';
import type { RetryPolicy } from '../../lib/run/callWithRetry.js';
import { runPartition } from '../../lib/run/runPartition.js';
import { Semaphore } from '../../lib/run/Semaphore.js';
import { EmbeddedLedger } from '../../lib/store/index.js';
import type { PartCommit, ReplyRow } from '../../lib/store/types.js';
import { localPartitionSpec, MemoryPartSink, partitionLedger, usePartitionCases, type PartitionBench, type PartitionOver } from '../helpers/partitionSpec.js';

// The partition runner against a provider that keeps count: transient failures are retried and
// stored as error rows, a permanent error fails its item once, and every reply is paid once,
// also when the run dies between writing a part and committing it, or between the commit and the
// journal's removal.

const CAMPAIGN = 'run-small';
const PRICE: Price = { input_per_mtok: 2, output_per_mtok: 10 };
const RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 0, maxDelayMs: 0, timeoutMs: 30_000 };

class FakeError extends Error {
  constructor(readonly kind: 'transient' | 'permanent', itemId: string, attempt: number) {
    super(`fake ${kind} error on ${itemId}, call ${attempt}`);
  }
}

/** Fails a seeded 20 % of calls transiently and every call to `permanent`; counts calls per item. */
class FakeProvider implements ModelProvider {
  readonly id = 'fake/counting';
  readonly simulated = true;
  readonly calls = new Map<string, number>();

  constructor(private readonly permanent: string) {}

  /** Whether the n-th call (1-based, over the provider's life) to an item fails transiently. */
  static transient(itemId: string, call: number): boolean {
    return seededRandom(seedFromKey(`fake|${itemId}|${call}`))() < 0.2;
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const id = req.item!.item_id;
    const call = (this.calls.get(id) ?? 0) + 1;
    this.calls.set(id, call);
    await tick();
    if (id === this.permanent) throw new FakeError('permanent', id, call);
    if (FakeProvider.transient(id, call)) throw new FakeError('transient', id, call);
    return { text: `reply to ${id}`, finish_reason: 'stop', usage: { input_tokens: 90 + (id.charCodeAt(0) % 7), output_tokens: 12 + call } };
  }

  classifyError(err: unknown): RetryDecision {
    if (err instanceof FakeError && err.kind === 'transient') return { retry: true, kind: 'transient', errorClass: 'fake_transient' };
    return { retry: false, errorClass: 'fake_permanent' };
  }

  totalCalls(): number {
    return [...this.calls.values()].reduce((s, n) => s + n, 0);
  }
}

/** Holds every call until `open()`, then answers at once: lets a test line chunks up. */
class GatedProvider implements ModelProvider {
  readonly id = 'fake/gated';
  readonly simulated = true;
  waiting = 0;
  private release: () => void = () => {};
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  open(): void {
    this.release();
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    this.waiting++;
    await this.gate;
    return { text: `reply to ${req.item!.item_id}`, finish_reason: 'stop', usage: { input_tokens: 80, output_tokens: 10 } };
  }

  classifyError(): RetryDecision {
    return { retry: false, errorClass: 'fake_permanent' };
  }
}

/** Dies (throws) in commitPart as a killed process would: before it, or just after it. */
class DyingLedger extends EmbeddedLedger {
  commits = 0;
  constructor(
    dir: string,
    runId: string,
    private readonly die: (commit: PartCommit, n: number) => 'before' | 'after-keep-journal' | undefined,
    private readonly journalDir: string,
    private readonly keep: string,
  ) {
    super(dir, { runId });
  }

  override async commitPart(commit: PartCommit): Promise<void> {
    const n = ++this.commits;
    const how = this.die(commit, n);
    if (how === 'before') throw new Error('killed before the ledger commit');
    await super.commitPart(commit);
    if (how === 'after-keep-journal') {
      // The journal is removed right after the commit; a copy stands for a kill in between.
      const name = `${path.basename(commit.partKey, '.parquet').replace(/^part-/, '')}.ndjson`;
      await mkdir(this.keep, { recursive: true });
      await copyFile(path.join(this.journalDir, name), path.join(this.keep, name));
    }
  }
}

const cases = usePartitionCases('partition', 80);

const BENCH: PartitionBench = {
  campaign: CAMPAIGN,
  price: PRICE,
  retry: RETRY,
  concurrency: 8,
  partRows: 24,
  readReply: (item, reply) => [
    { item_id: item.item_id, campaign: CAMPAIGN, phase: 'generate', model: 'alpha', language: 'en', reader: 'rule', label: 'P', raw: reply.text, judge_item_id: null },
  ],
};
const partitionSpec = (over: PartitionOver) => localPartitionSpec(BENCH, cases.dir, cases.items, over);
const newLedger = (runId: string, cap = 10) => partitionLedger(cases.dir, CAMPAIGN, runId, cap);

const journals = async () => (await readdir(path.join(cases.dir, 'journal')).catch(() => [])).filter((n) => n.endsWith('.ndjson'));
const rowsOf = (rows: readonly ReplyRow[], id: string) => rows.filter((r) => r.item_id === id);
const okPerItem = (rows: readonly ReplyRow[]) => {
  const out = new Map<string, number>();
  for (const r of rows) if (r.status === 'ok') out.set(r.item_id, (out.get(r.item_id) ?? 0) + 1);
  return out;
};
const sumCost = (rows: readonly ReplyRow[]) => rows.reduce((s, r) => s + r.cost_usd, 0);

/** A counting provider that refuses `cases.items[at]` for good, and an empty sink for its parts. */
function countingRun(at: number): { permanent: string; provider: FakeProvider; sink: MemoryPartSink } {
  const permanent = cases.items[at]!.item_id;
  return { permanent, provider: new FakeProvider(permanent), sink: new MemoryPartSink() };
}

/** Calls an item needs under RETRY on a fresh provider, and whether the last one succeeds. */
function expectedCalls(id: string, permanent: string): { calls: number; ok: boolean } {
  if (id === permanent) return { calls: 1, ok: false };
  for (let call = 1; call <= RETRY.maxAttempts; call++) if (!FakeProvider.transient(id, call)) return { calls: call, ok: true };
  return { calls: RETRY.maxAttempts, ok: false };
}

describe('runPartition with a counting provider', () => {
  it('stores every retry as an error row, fails a permanent error once, and counts each cost once', async () => {
    const { permanent, provider, sink } = countingRun(7);
    const ledger = await newLedger('run-1');
    const replied: ReplyRow[] = [];

    const out = await runPartition(partitionSpec({ runId: 'run-1', ledger, sink, provider, onReply: (r) => replied.push(r) }));

    const rows = sink.rows();
    const expected = new Map(cases.items.map((i) => [i.item_id, expectedCalls(i.item_id, permanent)]));
    const failedIds = [...expected].filter(([, e]) => !e.ok).map(([id]) => id);
    expect(out).toMatchObject({ done: cases.items.length - failedIds.length, failed: failedIds.length, adopted: 0, pending: 0 });
    // About a fifth of the calls failed transiently, so retries happened.
    expect(rows.filter((r) => r.error_class === 'fake_transient').length).toBeGreaterThan(8);

    for (const item of cases.items) {
      const e = expected.get(item.item_id)!;
      const mine = rowsOf(rows, item.item_id);
      // One row per call: nothing asked without a record, nothing recorded twice.
      expect(provider.calls.get(item.item_id)).toBe(e.calls);
      expect(mine.map((r) => r.attempt)).toEqual(Array.from({ length: e.calls }, (_, k) => k + 1));
      expect(mine.slice(0, -1).every((r) => r.status === 'error' && r.cost_usd === 0)).toBe(true);
      expect(mine.at(-1)!.status).toBe(e.ok ? 'ok' : 'error');
    }
    const perm = rowsOf(rows, permanent);
    expect(perm).toHaveLength(1);
    expect(perm[0]).toMatchObject({ status: 'error', error_class: 'fake_permanent', attempt: 1, text: null });
    expect(await ledger.counts(CAMPAIGN, 'generate')).toEqual({ pending: 0, done: cases.items.length - failedIds.length, failed: failedIds.length });

    // Every journaled row reached exactly one part; parts are the ledger's committed parts.
    expect(rows.length).toBe(replied.length);
    expect(rows.length).toBe(provider.totalCalls());
    expect(sink.replies.size).toBeGreaterThan(1);
    expect(await ledger.committedParts(CAMPAIGN, 'generate')).toEqual(new Set(sink.replies.keys()));
    expect([...sink.readings.values()].flat().length).toBe(cases.items.length - failedIds.length);

    const budget = await ledger.budget(CAMPAIGN);
    expect(budget.reserved_usd).toBe(0);
    expect(budget.spent_usd).toBeCloseTo(sumCost(rows), 12);
    expect(out.costUsd).toBeCloseTo(sumCost(rows), 12);
    expect(await journals()).toEqual([]);
    await ledger.close();
  });

  it('commits a part once when it fills up while other chunks of it finish in the same turn', async () => {
    // Every call waits at a gate until the four chunks of the first part are all in flight; then
    // they finish together: the first to finish seals the part, the last one commits it.
    const provider = new GatedProvider();
    const sink = new MemoryPartSink();
    const ledger = await newLedger('run-1');
    const few = cases.items.slice(0, 24);
    const running = runPartition(partitionSpec({ runId: 'run-1', ledger, sink, provider, items: few, chunkSize: 4, partRows: 4, semaphore: new Semaphore(16) }));
    while (provider.waiting < 16) await tick();
    provider.open();
    const out = await running;

    const rows = sink.rows();
    expect(out).toMatchObject({ done: few.length, failed: 0, pending: 0 });
    expect(rows.length).toBe(few.length);
    expect([...okPerItem(rows).values()].every((n) => n === 1)).toBe(true);
    expect(await ledger.committedParts(CAMPAIGN, 'generate')).toEqual(new Set(sink.replies.keys()));
    const budget = await ledger.budget(CAMPAIGN);
    expect(budget.reserved_usd).toBe(0);
    expect(budget.spent_usd).toBeCloseTo(sumCost(rows), 12);
    expect(await journals()).toEqual([]);
    await ledger.close();
  });

  it('a second run asks only the items that failed transiently; --retry-failed also the permanent failure', async () => {
    const { permanent, provider, sink } = countingRun(3);
    const first = await newLedger('run-1');
    await runPartition(partitionSpec({ runId: 'run-1', ledger: first, sink, provider }));
    await first.close();
    const callsBefore = new Map(provider.calls);
    const spentBefore = sumCost(sink.rows());

    const ledger = await newLedger('run-2');
    const out = await runPartition(partitionSpec({ runId: 'run-2', ledger, sink, provider }));

    const askedAgain = [...provider.calls].filter(([id, n]) => n !== callsBefore.get(id)).map(([id]) => id);
    // A permanent error is recorded once: the resume does not pay for it again.
    expect(askedAgain).not.toContain(permanent);
    for (const id of askedAgain) expect(expectedCalls(id, permanent).ok).toBe(false);
    expect(out.done + out.failed).toBe(askedAgain.length);
    expect(rowsOf(sink.rows(), permanent)).toHaveLength(1);
    expect([...okPerItem(sink.rows()).values()].every((n) => n === 1)).toBe(true);
    expect((await ledger.budget(CAMPAIGN)).spent_usd).toBeCloseTo(spentBefore + out.costUsd, 12);

    const again = await runPartition(partitionSpec({ runId: 'run-3', ledger, sink, provider, retryFailed: true }));
    expect(provider.calls.get(permanent)).toBe(2);
    expect(again.failed).toBeGreaterThanOrEqual(1);
    expect(rowsOf(sink.rows(), permanent)).toHaveLength(2);
    await ledger.close();
  });
});

describe('runPartition after a run died in the middle of a commit', () => {
  it('killed after writing parts but before committing them: the next run replaces those parts, asks nothing again', async () => {
    const { permanent, provider, sink } = countingRun(5);
    // The first part commits; every later commit dies after its Parquet file was written.
    const dying = new DyingLedger(path.join(cases.dir, 'ledger'), 'run-1', (_, n) => (n > 1 ? 'before' : undefined), path.join(cases.dir, 'journal'), '');
    await dying.initCampaign(CAMPAIGN, 10, 'run-1');
    await expect(runPartition(partitionSpec({ runId: 'run-1', ledger: dying, sink, provider }))).rejects.toThrow('killed');
    await dying.close();
    const orphans = sink.replies.size - 1;
    expect(orphans).toBeGreaterThan(0);
    expect(await journals()).toHaveLength(orphans);
    const callsAfterKill = new Map(provider.calls);
    const onDisk = sink.rows();

    const ledger = await newLedger('run-2');
    const out = await runPartition(partitionSpec({ runId: 'run-2', ledger, sink, provider }));

    // The orphaned parts were adopted under their own names, not copied beside themselves.
    expect(out.adopted).toBeGreaterThan(0);
    expect(sink.replies.size).toBe(orphans + 1 + (out.done + out.failed > 0 ? 1 : 0));
    const rows = sink.rows();
    expect([...okPerItem(rows).values()].every((n) => n === 1)).toBe(true);
    expect(okPerItem(rows).size).toBe(cases.items.filter((i) => expectedCalls(i.item_id, permanent).ok).length);
    // Only items without a reply on disk were asked again.
    const okOnDisk = new Set(onDisk.filter((r) => r.status === 'ok').map((r) => r.item_id));
    for (const [id, n] of provider.calls) if (okOnDisk.has(id)) expect(n, id).toBe(callsAfterKill.get(id));
    // Paid once: the ledger's spend is the cost of the replies stored.
    const budget = await ledger.budget(CAMPAIGN);
    expect(budget.spent_usd).toBeCloseTo(sumCost(rows), 12);
    expect(budget.reserved_usd).toBe(0);
    // Every call of the dead run came back (its journals hold a row for each): nothing possibly billed.
    expect(budget.possibly_billed_usd).toBe(0);
    expect(await journals()).toEqual([]);
    await ledger.close();
  });

  it('killed after the commit but before the journal was removed: the journal is dropped, not adopted again', async () => {
    const { permanent, provider, sink } = countingRun(2);
    const keep = path.join(cases.dir, 'kept');
    const journalDir = path.join(cases.dir, 'journal');
    const dying = new DyingLedger(path.join(cases.dir, 'ledger'), 'run-1', () => 'after-keep-journal', journalDir, keep);
    await dying.initCampaign(CAMPAIGN, 10, 'run-1');
    await runPartition(partitionSpec({ runId: 'run-1', ledger: dying, sink, provider }));
    await dying.close();
    // Put the committed journals back, as a kill right after each commit would have left them.
    const kept = await readdir(keep);
    expect(kept.length).toBe(sink.replies.size);
    for (const name of kept) await copyFile(path.join(keep, name), path.join(journalDir, name));
    const partsBefore = new Map(sink.replies);
    const spentBefore = sumCost(sink.rows());

    const ledger = await newLedger('run-2');
    const out = await runPartition(partitionSpec({ runId: 'run-2', ledger, sink, provider }));

    expect(out.adopted).toBe(0);
    for (const [key, rows] of partsBefore) expect(sink.replies.get(key)).toBe(rows);
    // The permanent failure is not asked again, and its error row is not copied.
    expect(provider.calls.get(permanent)).toBe(1);
    expect(rowsOf(sink.rows(), permanent)).toHaveLength(1);
    expect([...okPerItem(sink.rows()).values()].every((n) => n === 1)).toBe(true);
    expect((await ledger.budget(CAMPAIGN)).spent_usd).toBeCloseTo(spentBefore + out.costUsd, 12);
    expect(await journals()).toEqual([]);
    await ledger.close();
  });
});
