/**
 * What the AWS worker's shard runner (runShards.ts) is given by its caller: the stores, the
 * scratch folder, the deadline, how parts are read and written, and where it logs. The Lambda
 * handler and the GPU job build it; apart from the runner so that they can name it without
 * importing the runner's dependencies.
 */
import type { BlobStore, Ledger } from '../store/types.js';
import type { ParquetIo } from './parquetIo.js';

/** Where a worker logs (Powertools' Logger on Lambda): a message and its structured fields. */
export interface ShardLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface ShardRunnerDeps {
  readonly store: BlobStore;
  /** The ledger, its reservations carrying the execution as run id. */
  readonly ledger: Ledger;
  /** Scratch folder of this invocation (journals, downloaded parts); removed at the end. */
  readonly scratch: string;
  readonly log: ShardLog;
  /** Records a failure `sondage status --aws` shows (a rejected key). */
  recordFailure(failure: { campaign: string; execution: string; at: string; error: string; cause: string }): Promise<void>;
  /** Redacts provider keys from a message (they are loaded from the secret). */
  redact(message: string): string;
  /** Fires at the deadline (safetyMs before the timeout); `check` is called after every reply. */
  readonly deadline: {
    readonly signal: AbortSignal;
    check(): void;
    abort(): void;
    /** Time left until the deadline fires: a call starts only while its attempt timeout, or the call window where shorter, is left (runShards startsBefore; calls in flight at the deadline are aborted). */
    leftMs?(): number;
  };
  /** Time left in ms (salvage waits at most that long, less a margin). */
  remainingMs(): number;
  /** Unique per invocation: reservation ids and part names carry it. */
  readonly invocation: string;
  readonly chunkSize?: number;
  readonly partRows?: number;
  /** Seal a part this long after it opened, full or not (the GPU job's gpu.commit_minutes). */
  readonly partMs?: number;
  /**
   * How parts are written and read: DuckDB (lib/run/parquetIoDuckDb.ts) where it is at hand, pure
   * JavaScript (parquetIoJs.ts) in the Lambda worker, which ships without DuckDB.
   */
  readonly parquet: ParquetIo;
  /** Length of the invocation's lease on the ledger (workerLease.ts; default LEASE_MS). */
  readonly leaseMs?: number;
  /**
   * Calls kept in flight, over the share of the campaign's `concurrency` a Lambda copy gets: the
   * GPU worker keeps hundreds in flight for its own vLLM's continuous batching (gpu.in_flight).
   */
  readonly inFlight?: number;
}
