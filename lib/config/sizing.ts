/**
 * How the stack sizes its Lambda functions and fans out shards: memory, timeout and
 * reserved concurrency sized for their work. The CDK app builds the functions from these
 * numbers and `sondage plan --aws` prices the same numbers, so the estimate cannot drift from what
 * is deployed.
 */

/** The instruction set a function runs on; it also sets the Lambda price per GB-second. */
export type LambdaArchitecture = 'x86_64' | 'arm64';

export interface FunctionSizing {
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly architecture: LambdaArchitecture;
  /** Reserved concurrency: the most copies that run at once (absent: the account's pool). */
  readonly reservedConcurrency?: number;
  /** Carries DuckDB's native binding (@duckdb/node-api) beside the bundle. */
  readonly duckdb: boolean;
  /** /tmp in MB (Lambda's default 512 when absent; 512 to 10,240). */
  readonly ephemeralStorageMb?: number;
}

/**
 * How a GPU job is sized and bounded (AWS Batch, functions/gpu). The stack's job definition and
 * the plan's shard sizes both read these, and `sondage plan --aws` prices the same numbers.
 */
export const GPU_JOB = {
  /** An attempt past this is stopped by Batch, and not retried: the worker stops itself before. */
  attemptTimeoutSeconds: 4 * 3600,
  /** The worker stops this long before the attempt's timeout, commits, and exits to be retried. */
  deadlineMarginSeconds: 15 * 60,
  /** Attempts per array child (Batch's most): Spot reclaims and self-stops each take one. */
  attempts: 10,
  /** Work one shard is cut to at the phase's throughput: well inside an attempt, one model load per hour of work. */
  shardSeconds: 3600,
  /** Bounds on a shard's items whatever the throughput. */
  minShardItems: 10,
  maxShardItems: 200_000,
  /** AWS Batch's largest array. */
  maxArraySize: 10_000,
  /**
   * Minutes a job spends before its first prompt: the instance starting, the image pulled, the
   * weights loaded (an assumption for the cost estimate; a 10 GB image and an 8B model take about this).
   */
  startupMinutes: 10,
  /**
   * Minutes AWS Batch keeps an instance after its last job ends before it terminates it: the
   * stack sets its compute environments' scale-down delay to this (AWS Batch API Reference,
   * ComputeScalingPolicy.minScaleDownDelayMinutes: "For each instance, the delay period begins when
   * the last job finishes. If no new jobs are placed on the instance during this delay, AWS Batch
   * terminates the instance once the delay expires"; 20 is the least it accepts). Without it the
   * delay is Batch's own, which AWS does not document; with it the idle time is one AWS states.
   */
  scaleDownDelayMinutes: 20,
  /**
   * Minutes allowed past that delay for the scale-in to act: AWS says the instance is terminated
   * "once the delay expires", not within how long (EC2 stops billing an instance once it is
   * shutting down). An allowance, not a documented figure.
   */
  scaleInAllowanceMinutes: 5,
} as const;

/**
 * What a dependent shard copies into the worker's /tmp, from the shard sizes the plan cuts
 * (lib/run/shards.ts: at most 2,000 items a Lambda shard, GPU_JOB.maxShardItems a GPU shard). The
 * shard copies only the parts whose writer shard meets its slice (lib/run/upstreamSlice.ts), one
 * shard's at a time, removed once read. Parts written by Lambda shards: its slice and at most its
 * two neighbours, ~6,000 rows. Parts written by one GPU shard (generate on a GPU, judged through an
 * API) carry that shard's whole range: up to GPU_JOB.maxShardItems rows. A stored reply row is at
 * most ~4 KB (a 1,024-token answer, its settings and usage; Parquet compresses it). So /tmp holds
 * 200,000 × 4 KB ≈ 800 MB at worst, with the journals (one shard's replies) beside it. In memory
 * the read keeps only the slice's rows (≤ 2,000) and one decoded part at a time (≤ 20,000 rows,
 * the parts' size), which the worker's 1,024 MB holds.
 */
export const DEPENDENT_READ = { rowBytes: 4096, journalMb: 256 } as const;

/** The worker's /tmp: the worst upstream copy of a dependent shard (DEPENDENT_READ), its journals, rounded up to 256 MB. */
export function workerScratchMb(): number {
  const upstreamMb = (GPU_JOB.maxShardItems * DEPENDENT_READ.rowBytes) / (1024 * 1024);
  return Math.max(512, Math.ceil((upstreamMb + DEPENDENT_READ.journalMb) / 256) * 256);
}

export type FunctionName = 'plan' | 'worker' | 'report' | 'recordFailure';

/**
 * Plan and report query with DuckDB, whose native binding is a per-platform package: they run on
 * x86_64 because that is the binding a Linux x86_64 `npm ci` installs (infra/constructs/Handler.ts
 * copies it beside the bundle, 68 MB). The worker only writes and reads parts, which it does in
 * JavaScript (lib/run/parquetIoJs.ts): no DuckDB, a bundle of ~6.5 MB (bench/lambda-bundles.ts).
 * The worker and the record-failure function have no native code: arm64, 20 % cheaper per
 * GB-second (the worker's bundle is pure JavaScript: test/infra/bundling.test.ts).
 */
export const FUNCTION_SIZING: Readonly<Record<FunctionName, FunctionSizing>> = {
  // Expands the campaign and registers the generate items in the ledger: the longest timeout Lambda
  // allows. A full-size FAR-6 run (~1M items) on a cold table needs ~1,000 s of writes (one partition
  // key takes ~1,000 writes/s), so the plan stops 120 s before the timeout and leaves the partitions
  // it did not reach to their workers (functions/plan PLAN_RESERVE_MS).
  plan: { memoryMb: 1769, timeoutSeconds: 900, architecture: 'x86_64', duckdb: true },
  // Mostly waiting on the provider: little CPU, enough memory for a part's rows (held in memory by
  // the JavaScript Parquet writer). Reserved concurrency caps provider load and the budget's race
  // window; the plan keeps each phase's Map concurrency at or below it.
  // Its /tmp holds a dependent shard's upstream copy (workerScratchMb: 1,280 MB, ~$0.00004 an
  // invocation above the free 512 MB).
  worker: { memoryMb: 1024, timeoutSeconds: 900, architecture: 'arm64', reservedConcurrency: 100, duckdb: false, ephemeralStorageMb: workerScratchMb() },
  // Statistics over the Athena results: CPU-bound bootstrap (300 draws), so one full vCPU (1769 MB).
  report: { memoryMb: 1769, timeoutSeconds: 600, architecture: 'x86_64', duckdb: true },
  recordFailure: { memoryMb: 256, timeoutSeconds: 30, architecture: 'arm64', duckdb: false },
};

/** Shards handed to one worker invocation by the Map's ItemBatcher. */
export const SHARDS_PER_BATCH = 4;

/** Minutes Athena may reuse an earlier identical query's result for `sondage results` (the execution's own analysis asks for none). */
export const ATHENA_RESULT_REUSE_MINUTES = 60;

/**
 * How the state machine's Report step waits for the analysis's Athena queries (no
 * Lambda waits past its timeout). The report polls a query only while more than `reserveMs` of its
 * 600 s is left, then answers `again` with the queries it started; the state machine waits
 * `waitSeconds` and invokes it again, which resumes the analysis. Each round polls about 480 s.
 */
export const REPORT_ROUNDS = {
  /**
   * Left to the report after its last poll: the statistics (FAR-6's bootstrap, seconds to tens of
   * seconds) and the result files, as the plan keeps 120 s (functions/plan PLAN_RESERVE_MS).
   */
  reserveMs: 120_000,
  /** Between two rounds; the report has just polled for minutes, so a short breather. */
  waitSeconds: 15,
  /**
   * Rounds before the execution fails naming the query still running (and stops it). Athena ends a
   * DML query after 30 minutes (its default service quota), so a query is never legitimately
   * waited for past about 4 rounds; the analyses run at most 6 queries one after another (FAR-6
   * with its judge audit), so 6 × 30 min ≈ 23 rounds covers the slowest analysis Athena lets run,
   * and 48 (≈ 6.5 h) leaves room for queueing in a busy workgroup. Past that, something is stuck.
   */
  maxRounds: 48,
} as const;

