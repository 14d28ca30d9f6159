/**
 * The state machine's "Plan" step (issue 4): loads the uploaded campaign with the CLI's loader,
 * refuses it when the expected cost passes the cap, sets the budget in the ledger, registers the
 * generate items and writes their prompts, and writes one shard manifest per phase for the
 * Distributed Maps. A re-started execution resumes: the ledger already holds the done items, and
 * the manifests list only shards that still have pending ones.
 * Payload (infra/constructs/Pipeline.ts): `{ campaign: $.campaign, execution: $$.Execution.Name, retryFailed: $.retryFailed }`.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ENV, PREFIX } from '../../lib/config/index.js';
import type { PhasePlan, PlanEvent, PlanOutput, Shard } from '../../lib/config/pipeline.js';
import { FAR6_SQL } from '../../lib/batteries/far6/sqlLibrary.js';
import { SondageError } from '../../lib/errors.js';
import { createBatchClient, createProvider } from '../../lib/providers/registry.js';
import { assertWithinBudget, ensurePrompts } from '../../lib/run/partitionSpec.js';
import { planCampaign } from '../../lib/run/planCampaign.js';
import type { RunContext } from '../../lib/run/runCampaign.js';
import { judgeShardDoneKey, phaseCopies, pollSeconds, registeredDigest, registeredKey, shardItems, slices } from '../../lib/run/shards.js';
import type { Phase } from '../../lib/run/shards.js';
import { athenaTableSources } from '../../lib/store/AthenaQueryable.js';
import { layout } from '../../lib/store/index.js';
import { ParquetWriter } from '../../lib/store/ParquetWriter.js';
import type { Ledger } from '../../lib/store/types.js';
import { downloadCampaign } from '../shared/campaignInput.js';
import { requiredEnv, storesFromEnv } from '../shared/env.js';
import { redactedError } from '../shared/secrets.js';
import type { HandlerDeps } from '../shared/types.js';

export interface PlanDeps extends HandlerDeps {
  /** Glue database of the campaign tables (ENV.glueDatabase): the Athena query names it. */
  readonly glueDatabase: string;
}

/**
 * A failed worker shard is an infrastructure failure (a failed call is a stored reply, not an
 * exception): the Map fails, the failure is recorded, and a re-started execution resumes.
 */
const TOLERATED_FAILURE_PERCENTAGE = 0;

/**
 * The query the Athena step runs: analyzeCampaign's first (the label maps), rendered with the same
 * table sources as the report handler, so the report adopts its results instead of paying again.
 */
export const FIRST_SQL_QUERY = 'label_maps';

/** Key of a phase's shard manifest (a JSON array of Shard; scratch/ expires by lifecycle). */
export function manifestKey(execution: string, phase: Phase): string {
  return `${PREFIX.scratch}${execution}/${phase}.json`;
}

function parseEvent(event: unknown): PlanEvent {
  const e = event as Partial<PlanEvent> | null;
  const problems: string[] = [];
  if (typeof e?.campaign !== 'string' || e.campaign === '') problems.push('campaign: expected the campaign name (a non-empty string)');
  if (typeof e?.execution !== 'string' || !/^[A-Za-z0-9_-]+$/.test(e.execution)) problems.push('execution: expected the execution name ($$.Execution.Name)');
  if (e?.retryFailed !== undefined && typeof e.retryFailed !== 'boolean') problems.push('retryFailed: expected true or false (sondage start --aws --retry-failed)');
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
  await deps.loadKeys();
  // /tmp outlives the invocation in a warm container: the copy is removed once loaded.
  const inputDir = join(deps.tmpDir, 'sondage-plan', e.execution);
  const ctx = await downloadCampaign(store, e.campaign, inputDir).finally(() => rm(inputDir, { recursive: true, force: true }));
  const { campaign, battery } = ctx;
  const costPlan = planCampaign(campaign, battery);
  assertWithinBudget(campaign, costPlan);
  // Every provider and batch client the workers will build, built once here: a missing key or a
  // bad provider setting fails the plan, before anything is written or spent.
  const providerCtx = { seed: campaign.seed, file: campaign.file, ...(battery.simulator ? { simulator: battery.simulator } : {}) };
  for (const m of campaign.models) await createProvider(m, providerCtx);
  if (campaign.judge) await createProvider({ ...campaign.judge, role: 'judge' }, providerCtx);
  for (const m of [...campaign.models, ...(campaign.judge ? [campaign.judge] : [])]) {
    if (m.mode === 'batch') await createBatchClient(m, providerCtx);
  }

  const ledger = deps.ledgerFor(e.execution);
  await ledger.initCampaign(campaign.name, campaign.budget_usd, e.execution);
  // Reservations of an execution that died (a worker killed at its timeout) go back to the budget;
  // open provider batches keep theirs, and their workers re-attach.
  const released = await ledger.releaseStale(campaign.name, e.execution);
  await store.put(layout.planKey(campaign.name), JSON.stringify(costPlan, null, 2));

  const writer = await ParquetWriter.create({ tmpDir: join(deps.tmpDir, 'sondage-parquet'), threads: 1 });
  let generate: GenerateShards;
  try {
    generate = await generateShards(ctx, ledger, writer, store, context, e.retryFailed === true);
  } finally {
    await writer.close();
  }
  const judge = await judgeShards(ctx, store, e.retryFailed === true);

  const phasePlan = async (phase: Phase, shards: readonly Shard[]): Promise<PhasePlan> => {
    const key = manifestKey(e.execution, phase);
    await store.put(key, JSON.stringify(shards));
    return {
      manifestKey: key,
      shardCount: shards.length,
      maxConcurrency: phaseCopies(campaign, phase),
      toleratedFailurePercentage: TOLERATED_FAILURE_PERCENTAGE,
      kind: 'lambda',
      pollSeconds: pollSeconds(campaign, phase),
    };
  };
  const out: PlanOutput = {
    generate: await phasePlan('generate', generate.shards),
    judge: await phasePlan('judge', judge),
    analysis: { queryString: FAR6_SQL.render(FIRST_SQL_QUERY, athenaTableSources(deps.glueDatabase, campaign.name, campaign.models.map((m) => m.id))) },
    expectedCostUsd: costPlan.totals.costUsd,
    capUsd: campaign.budget_usd,
  };
  logger.info('campaign planned', {
    campaign: campaign.name,
    execution: e.execution,
    retryFailed: e.retryFailed === true,
    generateShards: generate.shards.length,
    // Partitions left for the workers to register: the plan's time ran short (see PLAN_RESERVE_MS).
    unregisteredPartitions: generate.unregistered,
    judgeShards: judge.length,
    releasedReservations: released,
    expectedCostUsd: out.expectedCostUsd,
  });
  metrics.addDimension('campaign', campaign.name);
  metrics.addMetric('PlannedShards', MetricUnit.Count, generate.shards.length + judge.length);
  return out;
}

/**
 * Time the plan keeps for what follows registration (judge shards, manifests, output) and for the
 * partition it is registering when the time runs out. At full size (FAR-6: 8 models × 6 languages,
 * ~1M items, ~21,000 a partition) one partition is 840 BatchWriteItem and 210 BatchGetItem
 * requests: ~1 s of round trips, ~21 s at DynamoDB's 1,000 WRU/s for one partition key (a cold
 * table, not yet split for heat), plus ~7 s for the pending check at 3,000 RRU/s. The whole
 * registration is then ~1,000 s of writes and ~670 s of reads on a cold table, past the 900 s the
 * plan has: 120 s before its timeout the plan stops registering, and the partitions left are listed
 * whole for their workers to register (shard by shard, spread over the run).
 */
export const PLAN_RESERVE_MS = 120_000;

interface GenerateShards {
  readonly shards: Shard[];
  /** Partitions the plan did not register (its time ran short): their workers register them. */
  readonly unregistered: number;
}

/**
 * Generate shards: each model × language partition in expansion order, cut by the model's shard
 * size (one shard per partition in batch mode: the ledger keeps open batches per partition, so one
 * worker must own them all). Items are registered here, so that a shard lists only if the ledger
 * still has one of its items pending, and the partition's registeredKey marker tells its workers
 * not to register them again. Prompts are a pure function of the design: written once. With less
 * than PLAN_RESERVE_MS left, a partition not yet registered is listed whole and left unmarked.
 * With `retryFailed`, items failed permanently count as pending (issue 3, `--retry-failed`).
 */
async function generateShards(
  ctx: RunContext,
  ledger: Ledger,
  writer: ParquetWriter,
  store: PlanDeps['store'],
  context: Context,
  retryFailed: boolean,
): Promise<GenerateShards> {
  const { campaign, battery } = ctx;
  const copies = phaseCopies(campaign, 'generate');
  const shards: Shard[] = [];
  let unregistered = 0;
  for (const model of campaign.models) {
    for (const language of battery.languages) {
      const items = [...battery.expand(model, language)];
      const ids = items.map((i) => i.item_id);
      await ensurePrompts(writer, store, { campaign: campaign.name, phase: 'generate', model: model.id, language }, items, battery.prompts, false);
      const marker = registeredKey(campaign.name, { model: model.id, language });
      const digest = registeredDigest(ids);
      // A marker of other ids (the design changed since): registered again, new ids only written.
      const body = await store.get(marker);
      const marked = body !== undefined && Buffer.from(body).toString('utf8') === digest;
      let pending: ReadonlySet<string> | undefined;
      if (context.getRemainingTimeInMillis() > PLAN_RESERVE_MS) {
        if (!marked) {
          await ledger.registerItems(campaign.name, 'generate', ids);
          await store.put(marker, digest);
        }
        pending = await ledger.pendingAmong(campaign.name, 'generate', ids, { retryFailed });
      } else if (!marked) unregistered++;
      const size = model.mode === 'batch' ? items.length : shardItems(model, copies);
      for (const { start, end } of slices(items.length, size)) {
        // Without the pending check every slice is listed: a worker finds a finished one done and asks nothing.
        if (!pending || ids.slice(start, end).some((id) => pending.has(id))) shards.push({ model: model.id, language, start, end, mode: model.mode });
      }
    }
  }
  return { shards, unregistered };
}

/**
 * Judge shards: slices of each judged model's generate items that hold at least one item the
 * judge reads (seed 000 "Sentence judging"), cut by the judge's shard size, without those a
 * previous execution finished (judgeShardDoneKey). The judge items themselves depend on the
 * chosen replies, so the worker builds them after the generate phase. With `retryFailed` the done
 * markers are passed over: a marker leaves items failed permanently behind, and a generate item
 * asked again may bring a reply the judge has not read; the worker finds the rest done.
 */
async function judgeShards(ctx: RunContext, store: PlanDeps['store'], retryFailed: boolean): Promise<Shard[]> {
  const { campaign, battery } = ctx;
  const judge = campaign.judge;
  if (!judge) return [];
  const copies = phaseCopies(campaign, 'judge');
  const done = new Set(retryFailed ? [] : await store.list(`campaigns/${campaign.name}/judge/_shards/`));
  const shards: Shard[] = [];
  for (const model of campaign.models) {
    for (const language of battery.languages) {
      const needs = [...battery.expand(model, language)].map((i) => battery.needsJudge(i));
      const size = judge.mode === 'batch' ? needs.length : shardItems(judge, copies);
      for (const { start, end } of slices(needs.length, size)) {
        const shard: Shard = { model: model.id, language, start, end, mode: judge.mode };
        if (needs.slice(start, end).some(Boolean) && !done.has(judgeShardDoneKey(campaign.name, shard))) shards.push(shard);
      }
    }
  }
  return shards;
}

let cold: ReturnType<typeof createHandler> | undefined;

/** The Lambda entry point: dependencies built once per container, at the first invocation. */
export const handler = (event: unknown, context: Context): Promise<PlanOutput> => {
  if (!cold) {
    const stores = storesFromEnv('plan', { withKeys: true });
    cold = createHandler({
      ...stores,
      glueDatabase: requiredEnv(ENV.glueDatabase, 'plan'),
      logger: new Logger({ serviceName: 'sondage-plan' }),
      metrics: new Metrics({ namespace: 'sondage', serviceName: 'sondage-plan' }),
    });
  }
  return cold(event, context);
};
