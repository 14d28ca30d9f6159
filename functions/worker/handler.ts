/**
 * The item processor's worker: a thin Lambda over lib/run/runShards.ts, which runs the
 * shards of one ItemBatcher batch, of any phase of the battery's graph, through the same runners
 * as the local run, with the bucket as blob store and DynamoDB as ledger. Journals live in /tmp,
 * which does not survive the invocation, so the worker stops ~60 s before its timeout and commits
 * every journaled reply before it returns; what is left pending comes back with `again`, and the
 * state machine invokes it again after a Wait.
 *
 * Idempotency is the ledger's, not Powertools Idempotency's: an item is asked only while the
 * ledger has it pending, and a part's commit marks its items done, settles its reservations and
 * adds its cost in one transaction. A re-delivered or re-invoked batch finds its items done and
 * asks nothing twice, even when the first invocation died half-way, which a cached response (what
 * Powertools Idempotency stores) could not express.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { join } from 'node:path';
import { MAX_WORKER_TURNS, PHASE_NAME, WORKER_RETRYABLE_ERROR, executionNameProblem, executionToken, isShard } from '../../lib/config/pipeline.js';
import type { WorkerBatchInput, WorkerEvent, WorkerOutput } from '../../lib/config/pipeline.js';
import { SondageError } from '../../lib/errors.js';
import { giveUpShards } from '../../lib/run/giveUpShards.js';
import { runShards } from '../../lib/run/runShards.js';
import { ShardNotSalvagedError } from '../../lib/run/salvageShard.js';
import { isTransientAwsError } from '../../lib/store/transientAwsError.js';
import { STALL_METRIC } from '../../lib/config/operations.js';
import type { ShardRunnerDeps } from '../../lib/run/shardRunnerDeps.js';
import { campaignCache } from '../../lib/run/campaignInput.js';
import { jsParquetIo } from '../../lib/run/parquetIoJs.js';
import { storesFromEnv } from '../shared/env.js';
import { addSpendMetrics } from '../shared/spend.js';
import { redactFields, redactKeys, redactedError } from '../shared/secrets.js';
import type { HandlerDeps } from '../shared/types.js';
import { builtOnFirstCall } from '../shared/builtOnFirstCall.js';
import { powertools } from '../shared/powertools.js';

/** Stop this long before the Lambda's timeout: the last chunk's calls end and their part is committed. */
export const DEFAULT_SAFETY_MS = 60_000;

export interface WorkerDeps extends HandlerDeps {
  /** Milliseconds before the timeout at which the worker stops (default DEFAULT_SAFETY_MS). */
  readonly safetyMs?: number;
  /** Items per reservation and reply rows per part (default: the local run's 64 and 20,000). */
  readonly chunkSize?: number;
  readonly partRows?: number;
  /** Length of an invocation's lease on the ledger (default lib/run/workerLease.ts LEASE_MS). */
  readonly leaseMs?: number;
}

function parseEvent(event: unknown): WorkerEvent {
  const e = event as Partial<WorkerEvent> | null;
  const problems: string[] = [];
  const b = e?.BatchInput as Partial<WorkerBatchInput> | undefined;
  if (typeof b?.campaign !== 'string' || b.campaign === '') problems.push('BatchInput.campaign: expected the campaign name');
  const badName = executionNameProblem(b?.execution);
  if (badName !== undefined) problems.push(`BatchInput.execution: ${badName}`);
  if (b?.pollSeconds !== undefined && !(typeof b.pollSeconds === 'number' && Number.isFinite(b.pollSeconds) && b.pollSeconds >= 0)) {
    problems.push('BatchInput.pollSeconds: expected the seconds the Wait state waits (a number ≥ 0)');
  }
  if (b?.retryFailed !== undefined && typeof b.retryFailed !== 'boolean') problems.push('BatchInput.retryFailed: expected true or false');
  if (b?.copies !== undefined && !(Number.isInteger(b.copies) && b.copies >= 1)) problems.push('BatchInput.copies: expected the wave\'s worker copies (an integer ≥ 1)');
  const turns = (e?.result as Partial<WorkerOutput> | undefined)?.turns;
  if (turns !== undefined && !(Number.isInteger(turns) && turns >= 1)) problems.push('result.turns: expected the invocations so far (an integer ≥ 1)');
  if (e?.failure !== undefined && (typeof e.failure !== 'object' || e.failure === null)) problems.push('failure: expected the Catch output { Error, Cause }');
  if (!Array.isArray(e?.Items)) problems.push('Items: expected the array of shards the ItemBatcher sends');
  else {
    e.Items.forEach((s: unknown, i) => {
      const ok = isShard(s) && PHASE_NAME.test(s.phase);
      if (!ok) problems.push(`Items[${i}]: expected { phase, model, language, start, end, mode: sync|batch } with 0 ≤ start ≤ end`);
    });
  }
  if (problems.length > 0) throw new SondageError(`worker event: ${problems.join('; ')}; got ${JSON.stringify(event).slice(0, 500)}`);
  return e as WorkerEvent;
}

/**
 * An AbortSignal that fires `safetyMs` before the Lambda's timeout: a timer, and a check after
 * every reply (cheap, and what a test drives through the context's clock).
 */
function deadline(context: Context, safetyMs: number) {
  const controller = new AbortController();
  const check = () => {
    if (!controller.signal.aborted && context.getRemainingTimeInMillis() <= safetyMs) controller.abort();
  };
  const timer = setTimeout(() => controller.abort(), Math.max(0, context.getRemainingTimeInMillis() - safetyMs));
  const leftMs = () => context.getRemainingTimeInMillis() - safetyMs;
  return { signal: controller.signal, check, abort: () => controller.abort(), clear: () => clearTimeout(timer), leftMs };
}

/** The error that ends a batch past MAX_WORKER_TURNS: its shards, where it stood, what to do. */
function tooManyTurns(e: WorkerEvent, max: number): SondageError {
  const shards = e.Items.map((s) => `${s.phase} ${s.model}/${s.language} [${s.start}, ${s.end})`).join('; ');
  const last = e.result;
  const stood = last ? ` (last answer: ${last.pending} pending, ${last.openBatches} provider batch(es) open)` : '';
  return new SondageError(
    `worker: the batch of shards ${shards} was invoked ${max} times and still answered again${stood}; it is stopped so that its ` +
      'child execution does not run out of history. Look at `sondage status --aws` (open provider batches, rate limits, a rejected key) and ' +
      'the worker logs for these shards, then `sondage start --aws` again: what was answered stays, and the rest is asked again',
  );
}

/**
 * The error name the state machine invokes a batch again for (infra/constructs/Pipeline.ts,
 * WORKER_RETRYABLE_ERROR): S3 or DynamoDB throttling, a server fault or a broken connection that
 * outlasted the SDK's own retries, after the failed shard's salvage committed what it had
 * journaled and handed its reservations back (runShards), so the next invocation finds its items
 * either done or pending with nothing held: it asks nothing twice and pays nothing twice.
 */
export class TransientAwsError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = WORKER_RETRYABLE_ERROR;
  }
}

/** `err` renamed TransientAwsError when invoking the batch again is safe and may help; otherwise `err`. */
function retryable(err: unknown): unknown {
  if (err instanceof ShardNotSalvagedError || !isTransientAwsError(err)) return err;
  const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new TransientAwsError(`worker: a transient AWS failure past the SDK's retries (${what}); what the batch journaled is committed and nothing is held, so the batch may be invoked again`, { cause: err });
}

/** The handler over its dependencies (tests pass stores on local servers and a context whose clock they drive). */
export function createHandler(deps: WorkerDeps) {
  const campaigns = campaignCache(deps.store, deps.tmpDir);
  const base = async (event: unknown, context: Context): Promise<WorkerOutput> => {
    const e = parseEvent(event);
    try {
      // First, also for the give-up step: the keys are what every log line and error is redacted of.
      // Read again at this container's first invocation of an execution: a key fixed before
      // `sondage start --aws` is used at once, however warm the container.
      await deps.loadKeys(e.BatchInput.execution);
      const ctx = await campaigns(e.BatchInput.campaign, e.BatchInput.execution);
      const { execution } = e.BatchInput;
      // Reservations carry the execution as run id, so the next execution's plan releases the ones a
      // killed worker left; reservation ids and part names carry the invocation, unique per shard.
      const invocation = executionToken(`${execution}-${context.awsRequestId}`);
      const time = deadline(context, deps.safetyMs ?? DEFAULT_SAFETY_MS);
      const ledger = deps.ledgerFor(execution);
      const shardDeps: ShardRunnerDeps = {
        store: deps.store,
        ledger,
        scratch: join(deps.tmpDir, 'sondage-worker', invocation),
        // Powertools takes structured fields as its attributes; every line is redacted here, whatever logged it.
        log: {
          info: (m, f) => deps.logger.info(redactKeys(m), redactFields({ ...f })),
          warn: (m, f) => deps.logger.warn(redactKeys(m), redactFields({ ...f })),
          error: (m, f) => deps.logger.error(redactKeys(m), redactFields({ ...f })),
        },
        recordFailure: deps.recordFailure,
        redact: redactKeys,
        deadline: time,
        remainingMs: () => context.getRemainingTimeInMillis(),
        invocation,
        // No DuckDB in the worker's bundle: Parquet in JavaScript (lib/run/parquetIoJs.ts).
        parquet: jsParquetIo,
        ...(deps.chunkSize !== undefined ? { chunkSize: deps.chunkSize } : {}),
        ...(deps.partRows !== undefined ? { partRows: deps.partRows } : {}),
        ...(deps.leaseMs !== undefined ? { leaseMs: deps.leaseMs } : {}),
      };
      if (e.failure !== undefined) {
        // The give-up step: this batch's invocation failed after its retries.
        try {
          const gaveUp = await giveUpShards(ctx, e, e.failure, shardDeps);
          deps.metrics.addDimension('campaign', ctx.campaign.name);
          deps.metrics.addMetric('ItemsFailed', MetricUnit.Count, gaveUp.failed);
          return { done: 0, failed: gaveUp.failed, pending: 0, openBatches: 0, costUsd: 0, again: false, gaveUp: gaveUp.shards };
        } finally {
          time.clear();
        }
      }
      // A batch that keeps answering `again` ends here, before its child's history fills up.
      const turn = (e.result?.turns ?? 0) + 1;
      if (turn > MAX_WORKER_TURNS) throw tooManyTurns(e, MAX_WORKER_TURNS);
      let out: WorkerOutput;
      try {
        out = await runShards(ctx, e, shardDeps);
      } finally {
        time.clear();
      }
      // The Wait that follows `again` reads the same pollSeconds: the log says when the next invocation comes.
      const next = out.again && e.BatchInput.pollSeconds !== undefined ? { nextInvocationSeconds: e.BatchInput.pollSeconds } : {};
      const phases = [...new Set(e.Items.map((s) => s.phase))];
      deps.logger.info('shards run', redactFields({ campaign: ctx.campaign.name, phases, execution, shards: e.Items.length, ...out, ...next }));
      deps.metrics.addDimension('campaign', ctx.campaign.name);
      deps.metrics.addMetric('ItemsDone', MetricUnit.Count, out.done);
      deps.metrics.addMetric('ItemsFailed', MetricUnit.Count, out.failed);
      deps.metrics.addMetric('CostUsd', MetricUnit.NoUnit, out.costUsd);
      // Nothing settled, nothing open at a provider, not the cap: the stalled-progress alarm reads it.
      deps.metrics.addMetric(STALL_METRIC, MetricUnit.Count, out.done + out.failed === 0 && out.openBatches === 0 && out.stopped === undefined ? 1 : 0);
      if (out.keyBlocked) {
        deps.metrics.addMetric('ItemsKeyBlocked', MetricUnit.Count, out.keyBlocked);
        // A provider rejected a key: the next invocation in this container reads the secret again.
        deps.forgetKeys?.();
      }
      await addSpendMetrics(deps.metrics, ledger, ctx.campaign.name, deps.logger);
      return { ...out, turns: turn };
    } catch (err) {
      throw redactedError(e.failure === undefined ? retryable(err) : err);
    }
  };
  return middy(base).use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics));
}

/** The Lambda entry point: dependencies (and the provider keys, at the first call) once per container. */
export const handler = builtOnFirstCall<WorkerOutput>(() => createHandler({ ...storesFromEnv('worker', { withKeys: true }), ...powertools('worker') }));
