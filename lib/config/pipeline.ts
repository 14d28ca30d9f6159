/**
 * The payloads the state machine (infra/constructs/Pipeline.ts) hands to the Lambda handlers
 * (functions/) and what they return: one contract, so that the definition and the handlers cannot
 * drift. Tests feed handlers exactly these shapes (issue 4, "How it is tested").
 */

/** The execution input (`sondage start --aws` starts the state machine with it). */
export interface ExecutionInput {
  /** Campaign name: its files live under `campaigns/<campaign>/input/` (the uploaded campaign file and data). */
  readonly campaign: string;
  /**
   * Ask again the items whose last attempt failed for good (refusal, content filter, bad request):
   * `sondage start --aws --retry-failed`, as `sondage run --retry-failed` (issue 3). Absent: false
   * (the state machine's first state sets it, so the plan and the workers always get it).
   */
  readonly retryFailed?: boolean;
}

/** Key of the uploaded campaign file; the files it names sit beside it, same relative paths. */
export const CAMPAIGN_FILE_NAME = 'campaign.yaml';

/** `plan` handler input: `{ campaign: $.campaign, execution: $$.Execution.Name, retryFailed: $.retryFailed }`. */
export interface PlanEvent {
  readonly campaign: string;
  readonly execution: string;
  /** Ask again the items whose last attempt failed for good (`sondage start --aws --retry-failed`, issue 3). List shards whose items failed permanently (absent in older inputs: false). */
  readonly retryFailed?: boolean;
}

/**
 * One Distributed Map item (a line of the shard manifest, a JSON array in S3): a contiguous slice of
 * one partition's items in expansion order. Expansion is deterministic, so a worker re-expands the
 * partition and takes `[start, end)`; for the judge phase the slice is of the judged model's items.
 */
export interface Shard {
  readonly model: string;
  readonly language: string;
  readonly start: number;
  readonly end: number;
  /** `batch` when the model (or, in the judge phase, the judge) has `mode: batch`. */
  readonly mode: 'sync' | 'batch';
}

/** What the plan returns for one phase, at `$.plan.<phase>`. */
export interface PhasePlan {
  readonly manifestKey: string;
  readonly shardCount: number;
  /** From the campaign (`concurrency` and the models' RPM), never above the worker's reserved concurrency. */
  readonly maxConcurrency: number;
  readonly toleratedFailurePercentage: number;
  /** `gpu` when the phase's models run on the AWS Batch GPU queue (issue 4 "GPU batch"). */
  readonly kind: 'lambda' | 'gpu';
  /** Seconds between polls of open provider batches (Wait state in the item processor). */
  readonly pollSeconds: number;
}

/** `plan` handler output (`$.plan`). */
export interface PlanOutput {
  readonly generate: PhasePlan;
  readonly judge: PhasePlan;
  /** The SQL stage's first query, rendered for Athena (the report handler runs the rest). */
  readonly analysis: { readonly queryString: string };
  readonly expectedCostUsd: number;
  readonly capUsd: number;
}

/** The ItemBatcher's BatchInput (rendered from `$.campaign`, the phase and `$$.Execution.Name`). */
export interface WorkerBatchInput {
  readonly campaign: string;
  readonly phase: 'generate' | 'judge';
  readonly execution: string;
  /**
   * The phase plan's `pollSeconds`, which the item processor's Wait reads from here: how long until
   * the next invocation when this one returns `again` (the worker logs it; absent in older inputs).
   */
  readonly pollSeconds?: number;
  /** Ask again the items whose last attempt failed for good (`sondage start --aws --retry-failed`, issue 3). The worker's partition spec asks them (absent in older inputs: false). */
  readonly retryFailed?: boolean;
}

/**
 * `worker` handler input: what Distributed Map with ItemBatcher gives the item processor. After a
 * Wait (open provider batches, or items left when the Lambda's time ran short) the same input comes
 * back with the previous output at `result`.
 */
export interface WorkerEvent {
  readonly Items: readonly Shard[];
  readonly BatchInput: WorkerBatchInput;
  readonly result?: WorkerOutput;
}

/** `worker` handler output; the item processor loops (Wait `pollSeconds`) while `again` is true. */
export interface WorkerOutput {
  readonly done: number;
  readonly failed: number;
  /** Items not yet answered: the Lambda stopped before its timeout, or the budget ran out. */
  readonly pending: number;
  /** Provider batches submitted and not yet collected. */
  readonly openBatches: number;
  readonly costUsd: number;
  /**
   * Items left pending because a provider rejected its API key (recorded as a failure in the
   * ledger): not in `pending`, since invoking again cannot help until the key is fixed.
   */
  readonly keyBlocked?: number;
  readonly stopped?: 'budget';
  /** Invoke again after a Wait: open batches, or pending items with budget left. */
  readonly again: boolean;
}

/** `report` handler input. */
export interface ReportEvent {
  readonly campaign: string;
  /** The Athena execution of the SQL stage's first query (`$.sql.QueryExecution.QueryExecutionId`). */
  readonly queryExecutionId: string;
}

/** `report` handler output (`$.report`). */
export interface ReportOutput {
  /** Prefix of the results written (CSV, Markdown, HTML). */
  readonly resultsPrefix: string;
  readonly files: readonly string[];
}
