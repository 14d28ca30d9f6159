/**
 * The payloads the state machine (infra/constructs/Pipeline.ts) hands to the Lambda handlers
 * (functions/) and what they return: one contract, so that the definition and the handlers cannot
 * drift. Tests feed handlers exactly these shapes.
 */

/** The execution input (`sondage start --aws` starts the state machine with it). */
export interface ExecutionInput {
  /** Campaign name: its files live under `campaigns/<campaign>/input/` (the uploaded campaign file and data). */
  readonly campaign: string;
  /**
   * Ask again the items whose last attempt failed for good (refusal, content filter, bad request):
   * `sondage start --aws --retry-failed`, as `sondage run --retry-failed`. Absent: false
   * (the state machine's first state sets it, so the plan and the workers always get it).
   */
  readonly retryFailed?: boolean;
  /**
   * Plan even when the expected cost exceeds budget_usd, and run until the cap: `sondage start
   * --aws --allow-partial`, as `sondage run --allow-partial`. Absent: false (set by the state machine).
   */
  readonly allowPartial?: boolean;
}

/** Step Functions' limit on an execution name's length. */
export const EXECUTION_NAME_MAX = 80;

/**
 * Why `name` is not a name Step Functions gives an execution, or undefined when it is one: 1 to 80
 * characters, none of them whitespace, a bracket, a wildcard, a control character or one of
 * `" # % \ ^ | ~ \` $ & , ; : /` (the StartExecution rule). `sondage start --aws` names its
 * executions with letters, digits, `-` and `_` only (lib/cli/aws.ts executionName); an execution
 * started by hand under any other valid name runs too (its name is made safe where it names a file).
 */
export function executionNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'expected the execution name ($$.Execution.Name), a non-empty string';
  if (name.length > EXECUTION_NAME_MAX) return `expected at most ${EXECUTION_NAME_MAX} characters (Step Functions' limit), got ${name.length}`;
  // eslint-disable-next-line no-control-regex
  if (/[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/.test(name)) return `${JSON.stringify(name)} holds a character Step Functions refuses in an execution name`;
  return undefined;
}

/**
 * The execution's name as it may appear in a file name, a part name or a job name: every character
 * other than a letter, a digit, `-` or `_` becomes `_` (`.` too, so `..` never names a folder).
 */
export function executionToken(execution: string): string {
  return execution.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * The most invocations of the worker in one batch's loop (invoke, `again`, Wait pollSeconds,
 * invoke…). A child execution of the Distributed Map is a Standard execution, whose history holds
 * at most 25,000 events; each turn of the loop writes 9 (the task's entered, scheduled, started,
 * succeeded, exited; the Choice's entered, exited; the Wait's entered, exited), so a batch that
 * never settles would die near 2,700 turns with an error that names nothing. 1,000 turns leave
 * room for the give-up step and are more than any batch needs: at the 300 s polls of a provider
 * batch they are 83 hours, past the 24 h a provider takes at most; a sync shard (about 3 minutes of
 * calls) needs one or two 15-minute invocations. Past it the worker fails the batch, naming its
 * shards and what to do, and the give-up step records their pending items failed.
 */
export const MAX_WORKER_TURNS = 1_000;

/**
 * The error name (errorType) of a worker invocation that failed on a transient S3 / DynamoDB /
 * network fault after committing what it journaled and handing back its reservations: the state
 * machine invokes the batch again for it (infra/constructs/Pipeline.ts). Any other failure goes
 * to the give-up step.
 */
export const WORKER_RETRYABLE_ERROR = 'TransientAwsError';

/**
 * How the item processor waits for a worker slot when Lambda throttles it at the reserved
 * concurrency (Lambda.TooManyRequestsException): 5 s doubling, at most 60 s apart, 40 tries, about
 * 36 minutes in all (with full jitter, on average half). Two campaigns running at once each size
 * their Map to the whole reservation; the one that comes second waits here for slots rather than
 * failing batches.
 */
export const WORKER_THROTTLE_RETRY = { maxAttempts: 40, intervalSeconds: 5, backoffRate: 2, maxDelaySeconds: 60 } as const;

/** How often, and how far apart, the state machine invokes a batch again after a WORKER_RETRYABLE_ERROR. */
export const WORKER_RETRY = { maxAttempts: 4, intervalSeconds: 10, backoffRate: 2 } as const;

/** Key of the uploaded campaign file; the files it names sit beside it, same relative paths. */
export const CAMPAIGN_FILE_NAME = 'campaign.yaml';

/**
 * `plan` handler input. The state machine plans one wave at a time: `phasesRun` lists the phases
 * earlier waves of this execution ran (absent or empty: the first wave, which also sets the budget
 * and registers the root items).
 */
export interface PlanEvent {
  readonly campaign: string;
  readonly execution: string;
  /** Ask again the items whose last attempt failed for good (`sondage start --aws --retry-failed`). List shards whose items failed permanently (absent in older inputs: false). */
  readonly retryFailed?: boolean;
  /** The first wave plans a campaign whose expected cost exceeds budget_usd (`start --aws --allow-partial`; absent: false). */
  readonly allowPartial?: boolean;
  /** Phases earlier waves of this execution ran. */
  readonly phasesRun?: readonly string[];
}

/**
 * One Distributed Map item (a line of a wave's shard manifest, a JSON array in S3): a contiguous
 * slice of one partition of one phase, in expansion order. Expansion is deterministic, so a worker
 * re-expands the partition and takes `[start, end)`: of the phase's own items for a root phase, of
 * the items of its first input phase for a dependent phase cut by source, and the whole partition
 * for one cut by partition.
 */
export interface Shard {
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  readonly start: number;
  readonly end: number;
  /** `batch` when the entry that answers the phase has `mode: batch`. */
  readonly mode: 'sync' | 'batch';
}

/** A phase name as an event carries it (the pattern lib/battery/phaseGraph.ts holds a battery's phases to). */
export const PHASE_NAME = /^[a-z][a-z0-9_-]*$/;

/**
 * Whether `s` has a Shard's fields, typed, with 0 ≤ start ≤ end: how the Lambda worker checks the
 * shards of its event and the GPU worker the lines of its manifest.
 * @example isShard({ phase: 'generate', model: 'm', language: 'de', start: 0, end: 10, mode: 'sync' }) // true
 */
export function isShard(s: unknown): s is Shard {
  const x = s as Partial<Shard> | null;
  return (
    typeof x?.phase === 'string' &&
    typeof x.model === 'string' &&
    typeof x.language === 'string' &&
    Number.isInteger(x.start) &&
    Number.isInteger(x.end) &&
    x.start! >= 0 &&
    x.end! >= x.start! &&
    (x.mode === 'sync' || x.mode === 'batch')
  );
}

/** The Lambda half of a wave, at `$.plan.wave.lambda`. */
export interface WaveMap {
  readonly manifestKey: string;
  readonly shardCount: number;
  /** Worker copies: from the campaign (`concurrency` and the models' RPM), never above the worker's reserved concurrency. */
  readonly maxConcurrency: number;
  readonly toleratedFailurePercentage: number;
  /** Seconds between polls of open provider batches (Wait state in the item processor). */
  readonly pollSeconds: number;
}

/** An environment variable or a resource of an AWS Batch container override, as SubmitJob takes them. */
export interface BatchNameValue {
  readonly Name: string;
  readonly Value: string;
}
export interface BatchResource {
  readonly Type: 'GPU' | 'VCPU' | 'MEMORY';
  readonly Value: string;
}

/**
 * One AWS Batch job of a wave (an item of `$.plan.wave.gpu.jobs`): the shards of one runs_on: gpu
 * model, grouped into children of about an hour of work each (its manifest is a JSON array of
 * Shard arrays, one per child); each child starts its own vLLM and runs its group
 * (AWS_BATCH_JOB_ARRAY_INDEX picks it), or a plain job when there is one child
 * (GPU_ENV.shardIndex). The plan resolves everything the state machine passes on, so the
 * definition only copies paths.
 */
export interface GpuJob {
  /** Campaign id of the model entry the job serves. */
  readonly model: string;
  readonly instanceType: string;
  readonly capacity: 'spot' | 'on-demand';
  /** ARN of the stack's queue for this instance type and capacity. */
  readonly jobQueue: string;
  /** Unique per execution, wave and model; letters, digits, `-` and `_`, at most 128. */
  readonly jobName: string;
  /** Key of the job's manifest: a JSON array of Shard arrays, one per child. */
  readonly manifestKey: string;
  /** Array children (the array's size; 1: a plain job). */
  readonly children: number;
  /** Shards over every child. */
  readonly shards: number;
  /** ContainerOverrides.ResourceRequirements: the model's GPUs and its share of the instance. */
  readonly resources: readonly BatchResource[];
  /** ContainerOverrides.Environment (GPU_ENV): campaign, execution, manifest, model, retryFailed. */
  readonly environment: readonly BatchNameValue[];
}

/** The GPU half of a wave, at `$.plan.wave.gpu` (docs/gpu.md). */
export interface WaveGpu {
  /** Shards over every job (its children run them). */
  readonly shardCount: number;
  /** One job per runs_on: gpu model with shards in this wave; empty when none. */
  readonly jobs: readonly GpuJob[];
}

/** `plan` handler output (`$.plan`). */
export interface PlanOutput {
  /** The phases ready now (their inputs have run) and their shards; no phase: every phase has run. */
  readonly wave: { readonly phases: readonly string[]; readonly lambda: WaveMap; readonly gpu: WaveGpu };
  /** `phasesRun` after this wave: what the next plan is told. */
  readonly phasesRun: readonly string[];
  /** True once every phase of the battery's graph has run: the state machine goes on to the SQL stage. */
  readonly done: boolean;
  /** The SQL stage's first query, rendered for Athena (the report handler runs the rest). */
  readonly analysis: { readonly queryString: string };
  readonly expectedCostUsd: number;
  readonly capUsd: number;
}

/** The ItemBatcher's BatchInput (rendered from `$.campaign`, `$.plan.wave.lambda` and `$$.Execution.Name`). */
export interface WorkerBatchInput {
  readonly campaign: string;
  readonly execution: string;
  /**
   * The wave's `pollSeconds`, which the item processor's Wait reads from here: how long until the
   * next invocation when this one returns `again` (the worker logs it; absent in older inputs).
   */
  readonly pollSeconds?: number;
  /** Ask again the items whose last attempt failed for good (`sondage start --aws --retry-failed`). The worker's partition spec asks them (absent in older inputs: false). */
  readonly retryFailed?: boolean;
  /** Worker copies of the wave (its Map's maxConcurrency): each takes this share of a model's RPM/TPM. */
  readonly copies?: number;
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
  /**
   * Set by the item processor's give-up step (the Catch of the worker's invocation, `{ Error, Cause }`):
   * the worker records the batch's pending items failed and the failure in the ledger, and runs nothing.
   */
  readonly failure?: { readonly Error?: string; readonly Cause?: string };
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
  /**
   * Items left pending because a provider asked to wait longer than a worker waits (Retry-After
   * above DEFAULT_MAX_WAIT_MS; recorded as a failure saying when to resume): not in `pending`,
   * since invoking again before then meets the same wait.
   */
  readonly waitBlocked?: number;
  readonly stopped?: 'budget';
  /**
   * Invocations of the worker in this batch's loop so far, this one included (the next invocation
   * reads it at `$.result.turns`); past MAX_WORKER_TURNS the batch fails.
   */
  readonly turns?: number;
  /** The give-up step's answer (WorkerEvent.failure): the shards given up on; `failed` counts their items recorded failed. */
  readonly gaveUp?: readonly string[];
  /** Invoke again after a Wait: open batches, or pending items with budget left. */
  readonly again: boolean;
}

/** `report` handler input (infra/constructs/Pipeline.ts, the "Report" state). */
export interface ReportEvent {
  readonly campaign: string;
  /** The Athena execution of the SQL stage's first query (`$.sql.QueryExecution.QueryExecutionId`). */
  readonly queryExecutionId: string;
  /** Rounds after which a query still running fails the execution (REPORT_ROUNDS.maxRounds, from the definition). */
  readonly maxRounds: number;
  /** Where the analysis stands: `{ round: 0, queries: {} }` at first, then the previous round's ReportAgain. */
  readonly progress: ReportProgress;
}

/** How far the report's rounds got (`$.report` between rounds). */
export interface ReportProgress {
  /** Invocations so far that answered `again`. */
  readonly round: number;
  /** The Athena executions the analysis started, by AthenaQueryable `queryKey`: polled and read, never started again. */
  readonly queries: Readonly<Record<string, string>>;
  /**
   * The executions seen to succeed, by the same key, with their result file and columns: the next
   * round reads their rows from the file (or its container's cache), with no Athena call.
   */
  readonly finished?: Readonly<Record<string, { readonly id: string; readonly output: string; readonly columns: readonly { readonly name: string; readonly type: string }[] }>>;
}

/** `report` handler output while a query still runs: the state machine waits `waitSeconds` and invokes it again with this as `progress`. */
export interface ReportAgain extends ReportProgress {
  readonly again: true;
  readonly waitSeconds: number;
  /** The query waited for when the invocation's time ran short. */
  readonly running: { readonly query: string; readonly queryExecutionId: string; readonly state: string };
}

/** `report` handler output (`$.report`) once the report is written. */
export interface ReportOutput {
  /** Prefix of the results written (CSV, Markdown, HTML). */
  readonly resultsPrefix: string;
  readonly files: readonly string[];
}
