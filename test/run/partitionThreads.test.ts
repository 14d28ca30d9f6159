import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CampaignFileError, SondageError } from '../../lib/errors.js';
import type { ProgressSink } from '../../lib/run/progress.js';
import { rebuiltError, threadError } from '../../lib/run/threadMessages.js';
import { describeStorageFailure, StorageError } from '../../lib/store/storageErrors.js';
import { concurrencyShares, MIN_LANGUAGES_PER_THREAD, RUN_MEMORY_BUDGET_BYTES, splitLanguages, THREAD_MIN_CALLS, THREAD_OVERHEAD_BYTES, threadsForWave } from '../../lib/run/partitionThreads.js';
import { ANALYSING, runCampaign } from '../../lib/run/runCampaign.js';
import type { RunOptions } from '../../lib/run/runCampaign.js';
import { loadContext, simulateOnModels, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { costOf, filesUnder, ledgerSnapshot, okCounts, readResult, storedReplies } from '../helpers/runData.js';

// Partition threads (lib/run/partitionThreads.ts): a run whose partitions run in threads asks, stores,
// charges and concludes exactly what the one-thread run does, stops as it does, and resumes.

const CAMPAIGN = 'run-small';
const RESULTS = ['story_scores.csv', 'readout_comparisons.csv'];

let root: string;
let cleanup: () => Promise<void>;
let file: string;
let reference: { spent: number; generate: string[]; judge: string[]; results: string[] };

/** A progress sink that keeps the last count each wave reached. */
function countingProgress(onTick?: (done: number) => void): ProgressSink & { readonly last: number[] } {
  const last: number[] = [];
  return {
    last,
    start: () => last.push(0),
    tick: (done) => {
      last[last.length - 1] = done;
      onTick?.(done);
    },
    finish: () => {},
  };
}

async function outcome(dataDir: string) {
  const generate = await storedReplies(dataDir, CAMPAIGN, 'generate');
  const judge = await storedReplies(dataDir, CAMPAIGN, 'judge');
  return {
    generate: [...okCounts(generate).keys()].sort(),
    judge: [...okCounts(judge).keys()].sort(),
    okTwice: [...okCounts(generate).values(), ...okCounts(judge).values()].filter((n) => n > 1).length,
    stored: costOf(generate) + costOf(judge),
  };
}

async function run(dataDir: string, options: RunOptions) {
  return runCampaign(await loadContext(file), { dataDir, ...options });
}

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('threads'));
  file = await writeCampaign(root, 'small.yaml');
  const dataDir = path.join(root, 'one-thread');
  const summary = await run(dataDir, { threads: 1 });
  expect(summary.stopped).toBeUndefined();
  const o = await outcome(dataDir);
  reference = { spent: summary.spentUsd, generate: o.generate, judge: o.judge, results: await Promise.all(RESULTS.map((r) => readResult(dataDir, CAMPAIGN, r))) };
  expect(reference.judge.length).toBeGreaterThan(0);
});

afterAll(async () => cleanup());

describe('partitions in threads', () => {
  it('ask, store, charge and conclude exactly what one thread does', async () => {
    const dataDir = path.join(root, 'two-threads');
    const progress = countingProgress();
    const log: string[] = [];
    const summary = await run(dataDir, { threads: 2, progress, log: (line) => log.push(line) });
    expect(summary.stopped).toBeUndefined();
    expect(log).toEqual(['partitions run in 2 threads (--threads 1: on one)', ANALYSING]);
    const o = await outcome(dataDir);
    expect(o.generate).toEqual(reference.generate);
    expect(o.judge).toEqual(reference.judge);
    expect(o.okTwice).toBe(0);
    expect(summary.spentUsd).toBeCloseTo(reference.spent, 9);
    expect(o.stored).toBeCloseTo(summary.spentUsd, 9);
    expect(await Promise.all(RESULTS.map((r) => readResult(dataDir, CAMPAIGN, r)))).toEqual(reference.results);
    // The threads' replies reached the progress bar: every wave counted up to its done items.
    expect(progress.last).toEqual([reference.generate.length, reference.judge.length]);
    const ledger = await ledgerSnapshot(dataDir, CAMPAIGN);
    expect(ledger.budget.reserved_usd).toBe(0);
    expect(ledger.generate).toEqual({ pending: 0, done: reference.generate.length, failed: 0 });
    // Nothing of the threads is left behind: no journal, no staging folder.
    expect(await filesUnder(path.join(dataDir, 'campaigns'), (n) => n.endsWith('.ndjson'))).toEqual([]);
    expect(await readdir(path.join(dataDir, '.tmp'))).toEqual([]);
  });

  it('stop on an abort and the next run asks only the rest, each item once', async () => {
    const dataDir = path.join(root, 'aborted');
    // Simulated latency keeps the generate wave busy for a few seconds, so the abort lands in it
    // (the threads report replies every 100 ms). The replies do not depend on it.
    const slow = await writeCampaign(root, 'small.yaml', (doc) => simulateOnModels(doc, { latency_ms: 10 }), 'slow.yaml');
    const controller = new AbortController();
    const half = Math.floor(reference.generate.length / 2);
    const first = await runCampaign(await loadContext(slow), {
      dataDir,
      threads: 2,
      signal: controller.signal,
      chunkSize: 4,
      progress: countingProgress((done) => {
        if (done >= half) controller.abort();
      }),
    });
    expect(first.stopped).toBe('aborted');
    const mid = await ledgerSnapshot(dataDir, CAMPAIGN);
    expect(mid.generate.done).toBeLessThan(reference.generate.length);
    expect(mid.budget.reserved_usd).toBe(0);
    const second = await runCampaign(await loadContext(slow), { dataDir, threads: 2 });
    expect(second.stopped).toBeUndefined();
    const o = await outcome(dataDir);
    expect(o.generate).toEqual(reference.generate);
    expect(o.judge).toEqual(reference.judge);
    expect(o.okTwice).toBe(0);
    expect(second.spentUsd).toBeCloseTo(reference.spent, 9);
  });

  it('started beside the plan, are closed when the run then refuses to start', async () => {
    const dataDir = path.join(root, 'refused');
    const over = await writeCampaign(root, 'small.yaml', (doc) => (doc['budget_usd'] = reference.spent / 3), 'over.yaml');
    await expect(runCampaign(await loadContext(over), { dataDir, threads: 2 })).rejects.toThrow(/budget/);
    // The threads had booted (only their writers make .tmp before the run's own) and left nothing.
    expect(await readdir(path.join(dataDir, '.tmp'))).toEqual([]);
    await expect(readdir(path.join(dataDir, 'campaigns'))).rejects.toThrow(/ENOENT/);
  });

  it('stop at the budget cap without passing it', async () => {
    const dataDir = path.join(root, 'capped');
    const capped = await writeCampaign(root, 'small.yaml', (doc) => (doc['budget_usd'] = reference.spent / 3), 'capped.yaml');
    const summary = await runCampaign(await loadContext(capped), { dataDir, threads: 2, allowPartial: true, chunkSize: 2 });
    expect(summary.stopped).toBe('budget');
    expect(summary.spentUsd).toBeGreaterThan(0);
    expect(summary.spentUsd + summary.possiblyBilledUsd).toBeLessThanOrEqual(reference.spent / 3 + 1e-12);
    expect((await ledgerSnapshot(dataDir, CAMPAIGN)).budget.reserved_usd).toBe(0);
  });
});

describe('how many threads a wave gets', () => {
  const MiB = 2 ** 20;
  /** A small run on a machine with memory to spare. */
  const roomy = { rssBytes: 100 * MiB, heapBytes: 50 * MiB, freeBytes: 16 * 1024 * MiB };

  it('one unless every answering model is simulated and no hook needs the main thread', () => {
    expect(threadsForWave(4, { calls: 1e6, simulatedOnly: false, hooks: false, ...roomy })).toBe(1);
    expect(threadsForWave(4, { calls: 1e6, simulatedOnly: true, hooks: true, ...roomy })).toBe(1);
    expect(threadsForWave(3, { calls: 10, simulatedOnly: true, hooks: false, ...roomy })).toBe(3);
    expect(threadsForWave(undefined, { calls: THREAD_MIN_CALLS - 1, simulatedOnly: true, hooks: false, ...roomy })).toBe(1);
    expect(threadsForWave(undefined, { calls: THREAD_MIN_CALLS, simulatedOnly: true, hooks: false, ...roomy })).toBe(Math.min(4, os.availableParallelism()));
  });

  it('no more by default than fit the memory budget, each costing the heap it loads again; --threads decides alone', () => {
    const wave = { calls: 1e6, simulatedOnly: true, hooks: false, freeBytes: 16 * 1024 * MiB };
    // Each thread: the main thread's heap (code, modules, design) + the overhead, within the budget
    // less the RSS now and as much again as the heap for the main thread's own growth.
    const perThread = 200 * MiB + THREAD_OVERHEAD_BYTES;
    const rssFor = (n: number): number => RUN_MEMORY_BUDGET_BYTES - 200 * MiB - n * perThread;
    expect(threadsForWave(undefined, { ...wave, heapBytes: 200 * MiB, rssBytes: rssFor(3) })).toBe(Math.min(3, os.availableParallelism()));
    expect(threadsForWave(undefined, { ...wave, heapBytes: 200 * MiB, rssBytes: rssFor(3) + 1 })).toBe(Math.min(2, os.availableParallelism()));
    expect(threadsForWave(undefined, { ...wave, heapBytes: 200 * MiB, rssBytes: rssFor(2) + 1 })).toBe(1);
    expect(threadsForWave(undefined, { ...wave, heapBytes: 200 * MiB, rssBytes: RUN_MEMORY_BUDGET_BYTES })).toBe(1);
    expect(threadsForWave(2, { ...wave, heapBytes: 200 * MiB, rssBytes: RUN_MEMORY_BUDGET_BYTES })).toBe(2);
  });

  it('P(True) gets two threads: its RSS when they are chosen is mostly garbage and native memory, which a thread does not copy', () => {
    // Measured when the run chooses (bench/local-throughput.ts's campaigns): at the paper's size
    // (2,880 items, 10 models) 192 MiB RSS and 60 MiB of heap at the first planned partition; at
    // 100 items, 3 models, 281 MiB and 89 MiB before the verify wave. The rule that weighed
    // (threads + 1) × RSS against 1 GiB kept both on one thread.
    const ptrue = { simulatedOnly: true, hooks: false, freeBytes: 16 * 1024 * MiB };
    expect(threadsForWave(undefined, { ...ptrue, calls: 1_036_800, rssBytes: 192 * MiB, heapBytes: 60 * MiB })).toBe(Math.min(2, os.availableParallelism()));
    expect(threadsForWave(undefined, { ...ptrue, calls: 70_632, rssBytes: 281 * MiB, heapBytes: 89 * MiB })).toBe(Math.min(2, os.availableParallelism()));
  });

  it('no more than two for the largest designs, however many cores: a thread costs its partitions\' rows, not only the heap it loads', () => {
    // P(True) at 2,880 items x 1 model (199 MiB RSS, 66 MiB of heap when chosen) peaked at
    // 1,854 MiB with two threads: a third would take it past 2 GB. FAR-6 at full size: 201 MiB, 54 MiB.
    const cores = vi.spyOn(os, 'availableParallelism').mockReturnValue(8);
    try {
      const wave = { calls: 1_036_800, simulatedOnly: true, hooks: false, freeBytes: 16 * 1024 * MiB };
      expect(threadsForWave(undefined, { ...wave, rssBytes: 199 * MiB, heapBytes: 66 * MiB })).toBe(2);
      expect(threadsForWave(undefined, { ...wave, rssBytes: 201 * MiB, heapBytes: 54 * MiB })).toBe(2);
    } finally {
      cores.mockRestore();
    }
  });

  it('a design whose languages the threads split costs each thread its share of the heap: two threads where, each loading all, it got one', () => {
    const languages = ['ar', 'de', 'en', 'es', 'fr', 'id', 'ja', 'ko', 'pt', 'ru', 'th', 'ur', 'vi', 'zh'];
    const wave = { calls: 250_000, simulatedOnly: true, hooks: false, freeBytes: 16 * 1024 * MiB };
    // Room: 2 GB less 300 MiB of RSS and 150 MiB of heap, ~1,457 MiB; split, 2 × (75 + 576) MiB; whole, 2 × (150 + 640) MiB.
    expect(threadsForWave(undefined, { ...wave, languages, rssBytes: 300 * MiB, heapBytes: 150 * MiB })).toBe(Math.min(2, os.availableParallelism()));
    expect(threadsForWave(undefined, { ...wave, rssBytes: 300 * MiB, heapBytes: 150 * MiB })).toBe(1);
    // Six languages (FAR-6, P(True)) are not split: weighed as before.
    expect(threadsForWave(undefined, { ...wave, languages: languages.slice(0, 6), rssBytes: 300 * MiB, heapBytes: 150 * MiB })).toBe(1);
  });

  it('X-Value at 100,000 pairs gets two threads, split, once its design loads without garbage; with the garbage it stayed on one', () => {
    // Measured at its first planned partition: 352–355 MiB RSS, 149 MiB of heap (two threads then
    // peaked at 1,632–1,735 MiB). When each load of its pairs left zod's garbage: 434–640 MiB RSS,
    // 293–362 MiB of heap, and two threads peaked at up to 2.15 GB. At 10,000 pairs (186, 74) it gets two.
    const languages = ['ar', 'de', 'en', 'es', 'fr', 'id', 'ja', 'ko', 'pt', 'ru', 'th', 'ur', 'vi', 'zh'];
    const xvalue = { calls: 502_600, simulatedOnly: true, hooks: false, freeBytes: 16 * 1024 * MiB, languages };
    const two = Math.min(2, os.availableParallelism());
    expect(threadsForWave(undefined, { ...xvalue, rssBytes: 355 * MiB, heapBytes: 149 * MiB })).toBe(two);
    expect(threadsForWave(undefined, { ...xvalue, rssBytes: 640 * MiB, heapBytes: 359 * MiB })).toBe(1);
    expect(threadsForWave(undefined, { ...xvalue, rssBytes: 434 * MiB, heapBytes: 293 * MiB })).toBe(1);
    expect(threadsForWave(undefined, { ...xvalue, calls: 53_900, rssBytes: 186 * MiB, heapBytes: 74 * MiB })).toBe(two);
  });

  it('no more than the machine has free memory for', () => {
    const wave = { calls: 1e6, simulatedOnly: true, hooks: false, rssBytes: 300 * MiB, heapBytes: 100 * MiB };
    const perThread = 100 * MiB + THREAD_OVERHEAD_BYTES;
    expect(threadsForWave(undefined, { ...wave, freeBytes: 2 * perThread })).toBe(Math.min(2, os.availableParallelism()));
    expect(threadsForWave(undefined, { ...wave, freeBytes: 2 * perThread - 1 })).toBe(1);
  });

  it('the threads an earlier wave started run every later wave they may, whatever the memory (their heaps) is now', () => {
    const judge = { calls: 10, simulatedOnly: true, hooks: false, rssBytes: RUN_MEMORY_BUDGET_BYTES, heapBytes: RUN_MEMORY_BUDGET_BYTES, freeBytes: 0 };
    expect(threadsForWave(undefined, { ...judge, running: 2 })).toBe(2);
    expect(threadsForWave(undefined, { ...judge, running: 3 })).toBe(3);
    expect(threadsForWave(undefined, judge)).toBe(1);
    expect(threadsForWave(undefined, { ...judge, running: 2, simulatedOnly: false })).toBe(1);
    expect(threadsForWave(undefined, { ...judge, running: 2, hooks: true })).toBe(1);
  });

  it('splits the languages between the threads when each gets enough of them, dealt in turn; otherwise every thread runs any', () => {
    // X-Value's fourteen.
    const fourteen = ['ar', 'de', 'en', 'es', 'fr', 'id', 'ja', 'ko', 'pt', 'ru', 'th', 'ur', 'vi', 'zh'];
    expect(splitLanguages(fourteen, 2)).toEqual([
      ['ar', 'en', 'fr', 'ja', 'pt', 'th', 'vi'],
      ['de', 'es', 'id', 'ko', 'ru', 'ur', 'zh'],
    ]);
    expect(splitLanguages(fourteen.slice(0, MIN_LANGUAGES_PER_THREAD * 2), 2)?.map((l) => l.length)).toEqual([4, 4]);
    // FAR-6's and P(True)'s six languages on two threads: one language more on a thread would idle the other too long.
    expect(splitLanguages(fourteen.slice(0, MIN_LANGUAGES_PER_THREAD * 2 - 1), 2)).toBeUndefined();
    expect(splitLanguages(fourteen, 1)).toBeUndefined();
  });

  it('splits the concurrency so that the shares add up to it', () => {
    expect(concurrencyShares(16, 2)).toEqual([8, 8]);
    expect(concurrencyShares(5, 2)).toEqual([3, 2]);
    expect(concurrencyShares(7, 3).reduce((a, b) => a + b)).toBe(7);
  });
});

describe('an error in a thread', () => {
  it('reaches the run as the class the CLI tells the user about, message and code kept', () => {
    const storage = rebuiltError(threadError(new StorageError('data/x: the disk is full', 'data/x', 'ENOSPC')));
    expect(storage).toBeInstanceOf(StorageError);
    expect(storage.message).toBe('data/x: the disk is full');
    expect((storage as StorageError).code).toBe('ENOSPC');
    expect(describeStorageFailure(storage)).toBe('data/x: the disk is full');
    const bad = rebuiltError(threadError(new CampaignFileError('c.yaml: models[0].base_url: is required')));
    expect(bad).toBeInstanceOf(SondageError);
    expect(bad.message).toBe('c.yaml: models[0].base_url: is required');
    const sqlite = rebuiltError(threadError(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })));
    expect(sqlite).not.toBeInstanceOf(SondageError);
    expect(describeStorageFailure(sqlite)).toContain('SQLITE_FULL');
  });
});
