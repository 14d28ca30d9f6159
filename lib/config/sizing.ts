/**
 * How the stack sizes its Lambda functions and fans out shards (issue 4: "handlers … sized (memory,
 * timeout, reserved concurrency) for their work"). The CDK app builds the functions from these
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
}

export type FunctionName = 'plan' | 'worker' | 'report' | 'recordFailure';

/**
 * Plan, worker and report read Parquet with DuckDB, whose native binding is a per-platform package:
 * they run on x86_64 because that is the binding a Linux x86_64 `npm ci` installs (infra/constructs/
 * Handler.ts copies it beside the bundle). The record-failure function has no native code: arm64,
 * 20 % cheaper per GB-second.
 */
export const FUNCTION_SIZING: Readonly<Record<FunctionName, FunctionSizing>> = {
  // Expands the campaign and registers the generate items in the ledger: the longest timeout Lambda
  // allows. A full-size FAR-6 run (~1M items) on a cold table needs ~1,000 s of writes (one partition
  // key takes ~1,000 writes/s), so the plan stops 120 s before the timeout and leaves the partitions
  // it did not reach to their workers (functions/plan PLAN_RESERVE_MS).
  plan: { memoryMb: 1769, timeoutSeconds: 900, architecture: 'x86_64', duckdb: true },
  // Mostly waiting on the provider: little CPU, enough memory for a part's Parquet and DuckDB.
  // Reserved concurrency caps provider load and the budget's race window; the plan keeps each
  // phase's Map concurrency at or below it.
  worker: { memoryMb: 1024, timeoutSeconds: 900, architecture: 'x86_64', reservedConcurrency: 100, duckdb: true },
  // Statistics over the Athena results: CPU-bound bootstrap (300 draws), so one full vCPU (1769 MB).
  report: { memoryMb: 1769, timeoutSeconds: 600, architecture: 'x86_64', duckdb: true },
  recordFailure: { memoryMb: 256, timeoutSeconds: 30, architecture: 'arm64', duckdb: false },
};

/** Shards handed to one worker invocation by the Map's ItemBatcher. */
export const SHARDS_PER_BATCH = 4;

/** Minutes Athena may reuse an earlier identical query's result (the report re-reads the first query). */
export const ATHENA_RESULT_REUSE_MINUTES = 60;
