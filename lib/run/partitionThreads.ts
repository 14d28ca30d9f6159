/**
 * Partition threads of the local run. With simulated models the run is bound by its own
 * bookkeeping on one JS thread (building items, hashing ids, staging Parquet rows, the ledger);
 * partitions are independent, so N threads each run whole partitions (partitionThreadMain.ts) and
 * the main thread only hands them out, serves their ledger calls and adds up. How many threads a
 * run gets by default is weighed against what each costs in memory (threadsForWave).
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { EmbeddedLedger } from '../store/EmbeddedLedger.js';
import type { PartitionOutcome } from './partitionTypes.js';
import type { StopState } from './stopState.js';
import { serveLedgerCall } from './threadLedger.js';
import { mergeStop, rebuiltError, snapshotOf } from './threadMessages.js';
import type { FromThread, ThreadInit, ToThread } from './threadMessages.js';

/**
 * Below this many calls in a wave, starting threads costs more than they save: each loads the code
 * anew (~0.5 s of wall and 0.7 s of CPU from a clone's bundle, lib/core/sourceBundle.mjs) and opens
 * its own stores.
 */
export const THREAD_MIN_CALLS = 20_000;
/**
 * A thread's young generation: a partition makes millions of short-lived objects (rows, lines,
 * ids). 64 MB instead of V8's default took 7 % off a quarter-size FAR-6 run in two threads
 * (38.3–38.8 s → 35.7–36.4 s, peak RSS about the same); 128 MB gained little more for 150 MB RSS.
 */
const YOUNG_GENERATION_MB = 64;
/**
 * Partitions each thread runs at once: one stages Parquet while the other calls. A partition of
 * more items than two parts holds two parts' rows with their items (the part committing and the
 * part filling) for most of its run; two such on a thread are one too many (`capacity`). P(True)'s
 * verify partitions at the paper's size (103,680 probes, 2,880 items x 2 models, 3271c39/a5b38fe):
 * two a thread peaked at 1,798–2,080 MiB, one a thread at 1,480–1,539 MiB, the wave as fast
 * (126–146 s against 133–140 s, the machine's noise).
 */
const PARTITIONS_PER_THREAD = 2;

/** Partitions a thread runs at once in a wave whose largest partition has `largestPartition` items (PARTITIONS_PER_THREAD). */
export function partitionsPerThread(largestPartition: number, partRows: number): number {
  return largestPartition > 2 * partRows ? 1 : PARTITIONS_PER_THREAD;
}

/**
 * Partitions a thread runs at once when the run splits the languages (splitLanguages): only a
 * design with many languages is split, and its partitions are large. X-Value at 100,000 pairs in
 * two threads: two step-3 partitions of ~28,600 prompts each held ~200 MB of a thread's heap; one
 * at a time took the run's peak from 2.45 GB to 1.88 GB, its step 1 + step 3 no slower (95.7 s
 * against 105.6 s, the same shared machine).
 */
const PARTITIONS_PER_SPLIT_THREAD = 1;

/**
 * What the run and its threads may hold together at their peak, in RSS, when the number is chosen
 * for the user: the 2 GB that a run of any battery at the papers' sizes is held to.
 */
export const RUN_MEMORY_BUDGET_BYTES = 2e9;

/**
 * What a thread costs at its peak beyond the heap it loads again (the code, the battery's modules,
 * the design): its young generation, its DuckDB (capped at 200 MB in partitionThreadMain.ts), its
 * Parquet writer and the rows of the two partitions it runs, which the memory measured when the
 * number is chosen cannot show. Measured at the two largest designs: P(True) at 2,880 items x 1
 * model (the paper's partitions; 199 MiB RSS and 66 MiB of heap when chosen) peaked at 1,070 MiB
 * on one thread and 1,854 MiB with two, ~730 MiB a thread beyond its heap; X-Value at 100,000
 * pairs (~300 MB of heap) 1.7 GB on one thread and 2.6 GB with two, ~600 MB beyond it. Weighed so,
 * both and FAR-6 at full size get two threads at most on any machine: three P(True) threads would
 * peak near 2.6 GB.
 */
export const THREAD_OVERHEAD_BYTES = 640 * 2 ** 20;

/**
 * What a thread costs beyond its share of the main thread's heap when the run splits the
 * languages (splitLanguages): it loads only its languages' design and runs one partition at a
 * time (PARTITIONS_PER_SPLIT_THREAD). X-Value at 100,000 pairs, the largest split design, peaked
 * at 1,883–2,154 MiB with two such threads when each load of its QA pairs left ~250 MB of zod's
 * garbage, and what the run measured when it chose varied (434–640 MiB of RSS, 293–362 MiB of
 * heap): the highest peak over the lowest measure was 567 MiB a thread beyond its half of the
 * heap, counted as threadsForWave counts, and it stayed on one thread. Loaded without that
 * garbage (lib/batteries/xvalue/data/quickQaPair.ts), it measures 352–355 MiB of RSS and 149 MiB
 * of heap and peaked at 1,632–1,735 MiB in six runs with two threads, 542 MiB a thread at most:
 * it gets two, 1,301 MiB of the 1,405 MiB of room.
 */
export const SPLIT_THREAD_OVERHEAD_BYTES = 576 * 2 ** 20;

/** What threadsForWave weighs a thread's cost against. */
export interface RunMemory {
  /** The run's RSS now (its design loaded and planned; DuckDB's native memory included). */
  readonly rssBytes: number;
  /**
   * The main thread's JS heap in use: what a thread loads again (the code, the battery's modules,
   * the design). RSS is not that measure: most of it after a plan is the plan's garbage and native
   * memory, which a thread does not copy.
   */
  readonly heapBytes: number;
  /** The machine's free memory now (os.freemem()). */
  readonly freeBytes: number;
}

/** The run's memory now, as threadsForWave reads it. */
export function runMemory(): RunMemory {
  return { rssBytes: process.memoryUsage.rss(), heapBytes: process.memoryUsage().heapUsed, freeBytes: os.freemem() };
}

/**
 * How many threads run a wave's partitions: `requested` when given (1: all on the main thread);
 * otherwise the machine's cores, up to 4, for a wave of at least THREAD_MIN_CALLS calls, and no
 * more than fit: each thread costs the main thread's heap (it loads the same code, modules and
 * design) plus THREAD_OVERHEAD_BYTES — or, when the threads split the design's languages
 * (splitLanguages), its share of that heap plus SPLIT_THREAD_OVERHEAD_BYTES — and the run's RSS,
 * as much again as its heap for its own growth, and the threads stay within
 * RUN_MEMORY_BUDGET_BYTES and within the memory the machine has free. P(True), even at the paper's
 * size (~70 MB of heap: its design is a few MB), gets two threads; so does X-Value at 100,000
 * pairs (149 MiB of heap and ~350 MiB of RSS when it chooses), its 14 languages split seven a
 * thread, where the whole design in each thread would not fit.
 * Only waves answered by simulated models run in threads: a real provider's rate limits and its
 * batch API are kept per process (RateLimiters), and its calls wait on the network, not the CPU. Threads started for an earlier
 * wave (`running`) run every later wave they may: their memory is spent already, and the run's
 * memory now counts their heaps, so measuring it again would wrongly keep the later waves on one
 * thread.
 */
export function threadsForWave(
  requested: number | undefined,
  wave: RunMemory & {
    readonly calls: number;
    readonly simulatedOnly: boolean;
    readonly hooks: boolean;
    readonly running?: number;
    /** The design's languages: enough of them, and the threads split them (splitLanguages), each costing less. */
    readonly languages?: readonly string[];
  },
): number {
  if (!wave.simulatedOnly || wave.hooks) return 1;
  if (requested !== undefined) return requested;
  if (wave.running !== undefined && wave.running > 1) return wave.running;
  if (wave.calls < THREAD_MIN_CALLS) return 1;
  // A thread of split languages loads its share of the design and runs one partition at a time.
  const perThread = (n: number): number =>
    splitLanguages(wave.languages ?? [], n) ? wave.heapBytes / n + SPLIT_THREAD_OVERHEAD_BYTES : wave.heapBytes + THREAD_OVERHEAD_BYTES;
  // The main thread's heap grows too once partitions run and the analysis reads them: as much again
  // is kept for it. Without this, X-Value at 100,000 pairs (434 MiB RSS, 293 MiB heap when chosen)
  // got two threads, each loading the whole design, and peaked at 3.0 GB.
  const room = Math.min(RUN_MEMORY_BUDGET_BYTES - wave.rssBytes - wave.heapBytes, wave.freeBytes);
  for (let n = Math.min(4, os.availableParallelism()); n > 1; n--) if (n * perThread(n) <= room) return n;
  return 1;
}

/**
 * Languages a thread must have at least, on average, for the run to split them between its
 * threads (splitLanguages). Split, a thread loads only its languages' design (Battery.load's
 * scope) but runs only their partitions: one language more on one thread than on another is then
 * work the other cannot take, at most a fifth of a thread's with four or more.
 */
export const MIN_LANGUAGES_PER_THREAD = 4;

/**
 * The languages each of `n` threads runs, dealt in turn (partitions of one phase go to the threads
 * alternately, in the wave's order), when there are enough to split (MIN_LANGUAGES_PER_THREAD);
 * otherwise undefined: every thread loads the whole design and runs any partition. X-Value's 14
 * languages on two threads: seven each, each thread holding half the design's pairs.
 */
export function splitLanguages(languages: readonly string[], n: number): string[][] | undefined {
  if (n < 2 || languages.length < MIN_LANGUAGES_PER_THREAD * n) return undefined;
  return Array.from({ length: n }, (_, t) => languages.filter((_l, i) => i % n === t));
}

/** Splits `concurrency` over `n` threads: the shares add up to it, each at least 1. */
export function concurrencyShares(concurrency: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.max(1, Math.floor(concurrency / n) + (i < concurrency % n ? 1 : 0)));
}

interface Task {
  resolve(value: { items: number; outcome: PartitionOutcome }): void;
  reject(err: Error): void;
}

class PartitionThread {
  active = 0;
  readonly tasks = new Map<number, Task>();
  failure?: Error;
  private exited = false;
  private closed?: () => void;
  /** Partitions of this thread's languages waiting for one of its PARTITIONS_PER_SPLIT_THREAD places, oldest first. */
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly worker: Worker,
    private readonly onMessage: (thread: PartitionThread, m: FromThread) => void,
    /** The languages whose partitions it runs (its design holds no other); undefined: any. */
    readonly languages?: ReadonlySet<string>,
  ) {
    worker.on('message', (m: FromThread) => {
      if (m.type === 'closed') this.closed?.();
      else onMessage(this, m);
    });
    // A thread that dies (a crash, not an error it reported) fails what it was running.
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => {
      this.exited = true;
      this.closed?.();
      if (this.tasks.size > 0) this.fail(new Error(`a partition thread exited (code ${code}) while running ${this.tasks.size} partition(s)`));
    });
  }

  fail(err: Error): void {
    this.failure ??= err;
    for (const t of this.tasks.values()) t.reject(err);
    this.tasks.clear();
    // Each woken one holds a place it gives back (below, in run) as it meets the failure.
    for (const wake of this.waiting.splice(0)) {
      this.active++;
      wake();
    }
  }

  /**
   * Takes one of the thread's PARTITIONS_PER_SPLIT_THREAD places (counted in `active` at once, so that
   * partitions handed out together cannot all see a free place), waiting for one if need be.
   */
  async place(): Promise<void> {
    if (this.active < PARTITIONS_PER_SPLIT_THREAD || this.failure) {
      this.active++;
      return;
    }
    // ended() hands its place over: `active` stays as it is.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** One of its partitions ended: its place goes to the oldest waiting, or is freed. */
  ended(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  post(m: ToThread): void {
    this.worker.postMessage(m);
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const closed = new Promise<void>((resolve) => (this.closed = resolve));
    this.post({ type: 'close' });
    await closed;
    await this.worker.terminate();
  }
}

/** What the run hears from its threads. */
export interface ThreadHooks {
  /** Replies journaled in a thread: `ok` answered, `costUsd` spent. */
  onReplies(ok: number, costUsd: number): void;
}

/**
 * The threads of one run, started once (the first wave that runs in threads) and kept for the
 * next waves. A stop (the budget, an abort, a rejected key) seen anywhere reaches every thread.
 */
export class PartitionThreads {
  private nextId = 0;

  private constructor(
    private readonly threads: readonly PartitionThread[],
    private readonly stop: StopState,
    /** Whether each thread runs only its own languages (splitLanguages). */
    private readonly split: boolean,
  ) {}

  /**
   * Starts `n` threads; resolves once each has loaded the campaign and opened its stores. The
   * threads are created before this returns its promise. `run.ledger` is looked up when a thread
   * first calls it (with its first partition), so the threads may boot while the run plans,
   * before the ledger is opened.
   */
  static async start(
    n: number,
    init: Omit<ThreadInit, 'concurrency'>,
    concurrency: number,
    run: { readonly ledger: () => EmbeddedLedger; readonly stop: StopState },
    hooks: ThreadHooks,
    languages: readonly string[] = [],
  ): Promise<PartitionThreads> {
    const { ledger, stop } = run;
    const threads: PartitionThread[] = [];
    const split = splitLanguages(languages, n);
    const self = new PartitionThreads(threads, stop, split !== undefined);
    const ready: Promise<void>[] = [];
    for (const [i, share] of concurrencyShares(concurrency, n).entries()) {
      const own = split?.[i];
      let started!: () => void;
      let refused!: (err: Error) => void;
      ready.push(new Promise<void>((resolve, reject) => ((started = resolve), (refused = reject))));
      const worker = new Worker(new URL('./partitionThread.mjs', import.meta.url), {
        workerData: { ...init, concurrency: share, ...(own ? { languages: own } : {}) } satisfies ThreadInit,
        resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      });
      const thread = new PartitionThread(worker, (t, m) => {
        if (m.type === 'ledger') serveLedgerCall(ledger(), m, (reply) => t.post(reply));
        else if (m.type === 'ready') started();
        else if (m.type === 'replies') hooks.onReplies(m.ok, m.costUsd);
        else if (m.type === 'done') {
          t.ended();
          const task = t.tasks.get(m.id);
          t.tasks.delete(m.id);
          self.noteStop(m.stop);
          task?.resolve({ items: m.items, outcome: m.outcome });
        } else if (m.type === 'failed') {
          const err = rebuiltError(m.error);
          if (m.id === undefined) {
            refused(err);
            t.fail(err);
            return;
          }
          t.ended();
          const task = t.tasks.get(m.id);
          t.tasks.delete(m.id);
          task?.reject(err);
        }
      }, own ? new Set(own) : undefined);
      worker.on('error', (err) => refused(err));
      threads.push(thread);
    }
    try {
      await Promise.all(ready);
    } catch (err) {
      await self.close();
      throw err;
    }
    return self;
  }

  /** How many threads there are. */
  get size(): number {
    return this.threads.length;
  }

  /**
   * How many partitions the wave hands the threads at once: as many as they run, two a thread, or
   * one when the wave's largest partition has more items than two parts of `partRows` (see
   * PARTITIONS_PER_THREAD); with the languages split, all of them, each waiting for a place on the
   * thread of its language (handed as many as they run, a wave could give one thread three and the
   * other one).
   */
  capacity(largestPartition: number, partRows: number): number {
    return this.split ? Number.POSITIVE_INFINITY : this.threads.length * partitionsPerThread(largestPartition, partRows);
  }

  /**
   * Runs one partition: on the thread of its language when the languages are split (once that
   * thread has a place, and only if `mayStart` still says so then; undefined when it did not),
   * otherwise on the least busy thread.
   */
  async run(phase: string, model: string, language: string, mayStart: () => boolean = () => true): Promise<{ items: number; outcome: PartitionOutcome } | undefined> {
    let thread: PartitionThread;
    if (this.split) {
      const own = this.threads.find((t) => t.languages?.has(language));
      if (own === undefined) throw new Error(`no partition thread runs language ${language}`);
      thread = own;
      await thread.place();
      if (thread.failure || !mayStart()) {
        thread.ended();
        if (thread.failure) throw thread.failure;
        return undefined;
      }
    } else {
      thread = this.threads.reduce((a, b) => (b.active < a.active ? b : a));
      if (thread.failure) throw thread.failure;
      thread.active++;
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      thread.tasks.set(id, { resolve, reject });
      thread.post({ type: 'run', id, phase, model, language });
    });
  }

  /** Tells every thread the run's stop state (after an abort, or what one thread reported). */
  broadcastStop(): void {
    const snapshot = snapshotOf(this.stop);
    for (const t of this.threads) t.post({ type: 'stop', stop: snapshot });
  }

  private noteStop(snapshot: ReturnType<typeof snapshotOf>): void {
    if (mergeStop(this.stop, snapshot)) this.broadcastStop();
  }

  /** Closes each thread's stores (its DuckDB, its writer's staging folder, its ledger connection). */
  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.close().catch(() => t.worker.terminate())));
  }
}
