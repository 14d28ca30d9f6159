/**
 * The state machine's "Plan wave" step: loads the uploaded campaign with the CLI's loader and plans
 * the next wave of the battery's phase graph (lib/run/planWave.ts): the first wave refuses a
 * campaign above its cap, checks every provider and key, sets the budget and registers the root
 * items; every wave writes one shard manifest for its Distributed Map. A re-started execution
 * resumes from the ledger and the done markers. After an edit of the uploaded design, each wave
 * first reads again the stored readings of its phases that the design would read otherwise
 * (lib/run/rereadStoredReadings.ts); what it says of them is logged and kept for `status --aws`.
 * Payload (infra/constructs/Pipeline.ts): `{ campaign: $.campaign, execution: $$.Execution.Name, retryFailed: $.retryFailed, allowPartial: $.allowPartial, phasesRun: $.phasesRun }`.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ENV } from '../../lib/config/index.js';
import type { BedrockBatchSettings } from '../../lib/config/index.js';
import { PHASE_NAME, executionNameProblem, executionToken } from '../../lib/config/pipeline.js';
import type { PlanEvent, PlanOutput } from '../../lib/config/pipeline.js';
import { stackEnvJson } from '../../lib/config/stackEnv.js';
import { SondageError } from '../../lib/errors.js';
import { createBatchClient, createProvider } from '../../lib/providers/registry.js';
import { answeringEntries } from '../../lib/run/context.js';
import { parseBedrockBatchEnv } from '../../lib/run/bedrockBatchChecks.js';
import { planCampaign } from '../../lib/run/planCampaign.js';
import { planWave } from '../../lib/run/planWave.js';
import { recordRereadNotice } from '../../lib/run/rereadStoredReadings.js';
import { workerCopiesCeiling } from '../../lib/run/shards.js';
import { ParquetWriter } from '../../lib/store/ParquetWriter.js';
import { downloadCampaign } from '../../lib/run/campaignInput.js';
import { storesFromEnv } from '../shared/env.js';
import { requiredEnv } from '../shared/requiredEnv.js';
import { redactedError } from '../shared/secrets.js';
import type { HandlerDeps } from '../shared/types.js';
import { builtOnFirstCall } from '../shared/builtOnFirstCall.js';
import { powertools } from '../shared/powertools.js';

export { PLAN_RESERVE_MS, manifestKey } from '../../lib/run/planWave.js';

export interface PlanDeps extends HandlerDeps {
  /** Glue database of the campaign tables (ENV.glueDatabase): the Athena query names it. */
  readonly glueDatabase: string;
  /** The stack's GPU queues (ENV.gpuQueues), undefined on a stack without them. */
  readonly gpuQueues?: Readonly<Record<string, string>>;
  /** The stack's Bedrock batch role and prefix (ENV.bedrockBatch), undefined on a stack without them. */
  readonly bedrockBatch?: BedrockBatchSettings;
  /** Ceiling on worker copies (ENV.workerCopies: the worker's reserved concurrency as deployed). */
  readonly maxWorkerCopies?: number;
}

/** ENV.gpuQueues as the stack sets it: a JSON object of gpuQueueKey → queue ARN. */
export function parseGpuQueues(value: string | undefined): Readonly<Record<string, string>> | undefined {
  const parsed = stackEnvJson('plan', ENV.gpuQueues, value);
  if (parsed === undefined) return undefined;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
    throw new SondageError(`plan: ${ENV.gpuQueues} must map "<instance type>/<capacity>" to a queue ARN (the stack sets it)`);
  }
  return parsed as Record<string, string>;
}

function parseEvent(event: unknown): PlanEvent {
  const e = event as Partial<PlanEvent> | null;
  const problems: string[] = [];
  if (typeof e?.campaign !== 'string' || e.campaign === '') problems.push('campaign: expected the campaign name (a non-empty string)');
  const badName = executionNameProblem(e?.execution);
  if (badName !== undefined) problems.push(`execution: ${badName}`);
  if (e?.retryFailed !== undefined && typeof e.retryFailed !== 'boolean') problems.push('retryFailed: expected true or false (sondage start --aws --retry-failed)');
  if (e?.allowPartial !== undefined && typeof e.allowPartial !== 'boolean') problems.push('allowPartial: expected true or false (sondage start --aws --allow-partial)');
  if (e?.phasesRun !== undefined && !(Array.isArray(e.phasesRun) && e.phasesRun.every((p) => typeof p === 'string' && PHASE_NAME.test(p)))) {
    problems.push('phasesRun: expected the list of phase names earlier waves ran');
  }
  if (problems.length > 0) throw new SondageError(`plan event: ${problems.join('; ')}; got ${JSON.stringify(event)}`);
  return e as PlanEvent;
}

/** The handler over its dependencies (tests pass stores on local servers). */
export function createHandler(deps: PlanDeps) {
  const base = async (event: unknown, context: Context): Promise<PlanOutput> => {
    const e = parseEvent(event);
    try {
      return await plan(deps, e, context);
    } catch (err) {
      throw redactedError(err);
    }
  };
  return middy(base).use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics));
}

async function plan(deps: PlanDeps, e: PlanEvent, context: Context): Promise<PlanOutput> {
  const { store, logger, metrics } = deps;
  // Read again at an execution's first plan: a key fixed since the last execution is checked as it is now.
  await deps.loadKeys(e.execution);
  // /tmp outlives the invocation in a warm container: the copy is removed once loaded.
  const inputDir = join(deps.tmpDir, 'sondage-plan', executionToken(e.execution));
  const ctx = await downloadCampaign(store, e.campaign, inputDir).finally(() => rm(inputDir, { recursive: true, force: true }));
  const { campaign, battery } = ctx;
  const phasesRun = e.phasesRun ?? [];
  if (phasesRun.length === 0) {
    // Every provider and batch client the workers will build, built once here: a missing key or a
    // bad provider setting fails the plan, before anything is written or spent.
    const providerCtx = { seed: campaign.seed, file: campaign.file, ...(battery.simulator ? { simulator: battery.simulator } : {}) };
    for (const { entry, role, path } of answeringEntries(ctx)) {
      // A runs_on: gpu model is served by its GPU job's own vLLM, at a URL the job knows (lib/run/gpuChecks.ts checks its queue and weights).
      if (entry.runs_on === 'gpu' && entry.provider !== 'simulated') continue;
      await createProvider({ ...entry, role, ...(path ? { simulationPath: path } : {}) }, providerCtx);
      if (entry.mode === 'batch') await createBatchClient(entry, providerCtx);
    }
  }
  const writer = await ParquetWriter.create({ tmpDir: join(deps.tmpDir, 'sondage-parquet'), threads: 1 });
  let result: Awaited<ReturnType<typeof planWave>>;
  try {
    result = await planWave({
      ctx,
      plan: planCampaign(ctx),
      execution: e.execution,
      retryFailed: e.retryFailed === true,
      allowPartial: e.allowPartial === true,
      phasesRun,
      store,
      ledger: deps.ledgerFor(e.execution),
      writer,
      remainingMs: () => context.getRemainingTimeInMillis(),
      glueDatabase: deps.glueDatabase,
      scratch: join(deps.tmpDir, 'sondage-plan', `${executionToken(e.execution)}-reread`),
      ...(deps.gpuQueues ? { gpuQueues: deps.gpuQueues } : {}),
      ...(deps.bedrockBatch ? { bedrockBatch: deps.bedrockBatch } : {}),
      ...(deps.maxWorkerCopies !== undefined ? { maxWorkerCopies: deps.maxWorkerCopies } : {}),
    });
  } finally {
    await writer.close();
  }
  const out = result.output;
  // What was read again under an edited design, and the settled shards listed again: logged, and kept for `sondage status --aws`.
  for (const line of result.notices) logger.info('stored readings', { campaign: campaign.name, execution: e.execution, notice: line });
  await recordRereadNotice(store, campaign.name, e.execution, result.notices, phasesRun.length === 0);
  logger.info('wave planned', {
    campaign: campaign.name,
    execution: e.execution,
    retryFailed: e.retryFailed === true,
    allowPartial: e.allowPartial === true,
    phases: out.wave.phases,
    shards: result.shards,
    gpuJobs: out.wave.gpu.jobs.map((j) => ({ model: j.model, queue: j.jobQueue, children: j.children, shards: j.shards })),
    // Partitions left for the workers to register: the plan's time ran short (see PLAN_RESERVE_MS).
    unregisteredPartitions: result.unregistered,
    releasedReservations: result.released,
    // GPU children the budget could not hold an attempt's bound for: their items stay pending.
    gpuChildrenHeldBack: result.gpuHeldBack,
    done: out.done,
    expectedCostUsd: out.expectedCostUsd,
  });
  metrics.addDimension('campaign', campaign.name);
  metrics.addMetric('PlannedShards', MetricUnit.Count, out.wave.lambda.shardCount + out.wave.gpu.shardCount);
  return out;
}

/** The Lambda entry point: dependencies built once per container, at the first invocation. */
export const handler = builtOnFirstCall<PlanOutput>(() =>
  createHandler({
    ...storesFromEnv('plan', { withKeys: true }),
    glueDatabase: requiredEnv(ENV.glueDatabase, 'plan'),
    ...(process.env[ENV.gpuQueues] ? { gpuQueues: parseGpuQueues(process.env[ENV.gpuQueues])! } : {}),
    ...(process.env[ENV.bedrockBatch] ? { bedrockBatch: parseBedrockBatchEnv(process.env[ENV.bedrockBatch])! } : {}),
    maxWorkerCopies: workerCopiesCeiling(process.env[ENV.workerCopies]),
    ...powertools('plan'),
  }),
);
