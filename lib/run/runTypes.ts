/**
 * What the local run (runCampaign.ts) takes and reports: its options, and the summary of each
 * phase and of the run. Apart from the run so that the CLI, the tests and the run's steps
 * (runWave.ts) can name them without importing the run.
 */
import type { ReadoutHealth } from '../battery/readoutHealth.js';
import type { ReplyRow } from '../store/types.js';
import type { RetryPolicy } from './callWithRetry.js';
import type { SyncRemainder } from './partitionTypes.js';
import type { Plan } from './planCampaign.js';
import type { ProgressSink } from './progress.js';
import type { BatchRunOptions } from './wavePartition.js';

export interface RunOptions {
  /** Overrides the campaign's data_dir. */
  readonly dataDir?: string;
  readonly progress?: ProgressSink;
  readonly log?: (line: string) => void;
  readonly signal?: AbortSignal;
  /** Start even when the expected cost exceeds the budget; the run stops cleanly at the cap. */
  readonly allowPartial?: boolean;
  /** Ask again the items whose last attempt failed permanently (`--retry-failed`). */
  readonly retryFailed?: boolean;
  /** Skip the analysis stage (tests that only look at collection). */
  readonly skipAnalysis?: boolean;
  /**
   * Calls per reservation (each chunk reserves its calls' maximum cost in one ledger write).
   * Default: the campaign's concurrency, at least 64 — as many as the semaphore lets run at once,
   * so a campaign of 256 concurrent calls writes a quarter of the reservations a chunk of 64 did
   * (FAR-6 at full size: 24k -> 6k ledger writes on the main thread). Near the cap a refused
   * reservation halves the chunk, down to one call, as before.
   */
  readonly chunkSize?: number;
  readonly partRows?: number;
  /** Source items per slice of a dependent phase's partition (lib/run/slicedItems.ts), and root items per slice of an unbegun one (lib/run/onePassPartition.ts); SLICE_SOURCE_ITEMS by default. */
  readonly sliceSources?: number;
  /** False: an unbegun partition is asked as a begun one is, registered and indexed whole first (lib/run/onePassPartition.ts); tests compare the two. */
  readonly onePass?: boolean;
  readonly partitionConcurrency?: number;
  /** Retries and timeouts; `maxWaitMs` (`--max-wait`) defaults to DEFAULT_MAX_WAIT_MS on the local run. */
  readonly retry?: RetryPolicy;
  /** Stop after this many replies have been journaled (tests of a killed run). */
  readonly onReply?: (row: ReplyRow) => void;
  /** Models with `mode: batch`: how often open batches are polled (default 30 s), and test hooks. */
  readonly batch?: BatchRunOptions;
  /**
   * Threads that run the partitions of simulated models (partitionThreads.ts; `sondage run
   * --threads`): 1 keeps everything on the main thread; by default the cores, up to 4, for a
   * wave of at least 20,000 calls, as many as fit the run's memory budget (threadsForWave).
   */
  readonly threads?: number;
}

export interface PhaseSummary {
  readonly phase: string;
  readonly items: number;
  readonly done: number;
  readonly failed: number;
  readonly adopted: number;
  readonly pending: number;
  readonly costUsd: number;
  /** Stored readings read again because the design's reading inputs changed, and how many of them changed. */
  readonly reread?: number;
  readonly rereadChanged?: number;
  /** Items of batch routes asked synchronously at the on-demand price, fewer than a batch must hold (PartitionOutcome). */
  readonly syncRemainder?: SyncRemainder;
}

export interface RunSummary {
  readonly campaign: string;
  readonly runId: string;
  readonly dataDir: string;
  readonly plan: Plan;
  readonly phases: readonly PhaseSummary[];
  readonly spentUsd: number;
  readonly capUsd: number;
  /** Calls of killed runs that left no reply: maybe billed, counted against the cap (all runs). */
  readonly possiblyBilledUsd: number;
  /** Reservations of a killed run still held: their partitions' journals were not read yet. */
  readonly heldUsd: number;
  readonly stopped?: 'budget' | 'aborted' | 'overrun';
  /** Models whose provider reported more usage than their calls reserved, and by how much (USD). */
  readonly overruns?: readonly { readonly model: string; readonly excessUsd: number }[];
  /** One message per provider model that rejected its API key (its items stay pending). */
  readonly keyFailures?: readonly string[];
  /** One message per provider model that asked to wait longer than `maxWaitMs` (its items stay pending), saying when to resume. */
  readonly waitStops?: readonly string[];
  readonly resultsPrefix?: string;
  /** The battery's analysis results (its own type). */
  readonly analysis?: unknown;
  /** Stored model/language partitions the campaign file no longer has: kept, not analysed. */
  readonly excluded?: readonly string[];
  /** How much of each numeric readout the analysis could read (lib/battery/readoutHealth.ts). */
  readonly readouts?: readonly ReadoutHealth[];
  readonly table?: string;
}
