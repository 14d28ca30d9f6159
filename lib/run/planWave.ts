/**
 * One wave of the AWS pipeline's plan (DESIGN.md "The flow of one campaign": "on AWS a loop plans
 * the phases now ready, runs their shards, and plans again"). The first wave of an execution sets
 * the budget, hands back what a dead execution reserved, and registers the root phases' items; each
 * wave lists the shards of the phases whose inputs have run, and only those with work left, in one
 * manifest for the wave's Distributed Map. A re-started execution resumes: the ledger holds the
 * done items of root phases, done markers those of dependent phases.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PhaseSpec } from '../battery/types.js';
import { GPU_ENV, gpuQueueKey, PREFIX } from '../config/index.js';
import type { BedrockBatchSettings } from '../config/index.js';
import { executionToken } from '../config/pipeline.js';
import type { GpuJob, PlanOutput, Shard, WaveMap } from '../config/pipeline.js';
import { GPU_JOB } from '../config/sizing.js';
import type { ModelEntry } from '../design/campaign.js';
import { jobResources } from '../gpu/instances.js';
import { instanceBound } from '../gpu/instanceTime.js';
import { athenaSources } from '../analysis/athena.js';
import { SondageError } from '../errors.js';
import type { ParquetWriter } from '../store/ParquetWriter.js';
import type { BlobStore, BudgetState, Ledger } from '../store/types.js';
import { answererOf } from './context.js';
import type { RunContext } from './context.js';
import { assertWithinBudget } from './partitionSpec.js';
import { ensurePrompts } from './promptsPart.js';
import { retireDroppedPartitions } from './rebuildLedger.js';
import { PartitionItems } from './partitionItems.js';
import { waitForFencedWorkers } from './workerLease.js';
import { publishCommitted } from '../store/stagedParts.js';
import type { Plan } from './planCampaign.js';
import { checkGpuQueues, checkGpuWeights } from './gpuChecks.js';
import { checkBedrockBatch } from './bedrockBatchChecks.js';
import { gpuSeconds, gpuShardItems, packShards, pollSeconds, registeredDigest, registeredKey, shardDoneKey, shardItems, shardOfDoneKey, slices, waveCopies } from './shards.js';
import { designDigest } from './designDigest.js';
import { rereadLines, rereadStoredReadings, type StoredReread } from './rereadStoredReadings.js';

/**
 * Time the plan keeps for what follows registration (the manifest, the output) and for the
 * partition it is registering when the time runs out. At full size (FAR-6: 8 models × 6 languages,
 * ~1M items, ~21,000 a partition) one partition is 840 BatchWriteItem and 210 BatchGetItem
 * requests: ~1 s of round trips, and at DynamoDB's 1,000 WRU/s and 3,000 RRU/s per partition key
 * (a cold table, not yet split for heat) over the ledger's 16 item keys (ITEM_SHARDS in
 * lib/store/dynamo/keys.ts) ~1.3 s of writes and ~0.5 s of reads. The whole registration is then
 * ~65 s of writes and ~40 s of reads on a cold table (under one key it was ~1,000 s and ~670 s,
 * past the 900 s the plan has). Should it still run short, 120 s before its timeout the plan stops
 * registering, and the partitions left are listed whole for their workers to register (shard by
 * shard, spread over the run).
 */
export const PLAN_RESERVE_MS = 120_000;

/**
 * Key of a wave's shard manifest (a JSON array of Shard; scratch/ expires by lifecycle): the
 * Lambda shards' one, or one per GPU model (`model`: its campaign id).
 */
export function manifestKey(execution: string, wave: number, kind: 'lambda' | 'gpu', model?: string): string {
  return `${PREFIX.scratch}${executionToken(execution)}/wave-${wave}-${kind}${model === undefined ? '' : `-${model}`}.json`;
}

/** AWS Batch job names: letters, digits, `-` and `_`, at most 128. */
const batchName = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');

/**
 * Name of the GPU job of one model in one wave of an execution: the execution's name first, so
 * that `status --aws` and `stop --aws` find an execution's jobs with ListJobs' JOB_NAME filter
 * (gpuJobNamePrefix).
 */
export function gpuJobName(execution: string, wave: number, model: string): string {
  return `${batchName(execution)}-w${wave}-${batchName(model)}`.slice(0, 128);
}

/** What every GPU job name of an execution starts with. */
export function gpuJobNamePrefix(execution: string): string {
  return `${batchName(execution)}-w`;
}

/** A listed shard and, when its answering model runs on a GPU, that model. */
interface RoutedShard {
  readonly shard: Shard;
  readonly gpu?: ModelEntry;
}

export interface PlanWaveArgs {
  readonly ctx: RunContext;
  /** The full cost plan (planCampaign), written to plan.json by the first wave. */
  readonly plan: Plan;
  readonly execution: string;
  readonly retryFailed: boolean;
  /** Plan a campaign whose expected cost exceeds its cap, to run until the cap (`start --aws --allow-partial`). */
  readonly allowPartial?: boolean;
  readonly phasesRun: readonly string[];
  readonly store: BlobStore;
  readonly ledger: Ledger;
  readonly writer: ParquetWriter;
  /** Milliseconds the plan has left (the Lambda context's clock). */
  remainingMs(): number;
  /** The Glue database the SQL step's query names. */
  readonly glueDatabase: string;
  /**
   * The stack's GPU queues by gpuQueueKey (the plan function's ENV.gpuQueues); undefined on a
   * stack without them, which then refuses a campaign with a runs_on: gpu model.
   */
  readonly gpuQueues?: Readonly<Record<string, string>>;
  /**
   * The stack's Bedrock batch role and prefix (the plan function's ENV.bedrockBatch); undefined on a
   * stack without them, which then refuses a campaign with `mode: batch` on a Bedrock model.
   */
  readonly bedrockBatch?: BedrockBatchSettings;
  /** Ceiling on worker copies: the worker's reserved concurrency as deployed (default MAX_WORKER_COPIES). */
  readonly maxWorkerCopies?: number;
  /** How often the first wave looks again for fenced workers still running (default 1 s). */
  readonly fencePollMs?: number;
  /** A folder of the plan's own for upstream parts it copies to read stored readings again (default: the system's temporary folder). */
  readonly scratch?: string;
}

/** Of the plan's time, what waiting for fenced workers leaves for the plan itself. */
const FENCE_WAIT_MARGIN_MS = 300_000;

export interface PlanWaveResult {
  readonly output: PlanOutput;
  /** Shards per phase of this wave. */
  readonly shards: Readonly<Record<string, number>>;
  /** Root partitions the plan did not register (its time ran short): their workers register them. */
  readonly unregistered: number;
  /** Reservations handed back (first wave only). */
  readonly released: number;
  /** GPU job children not submitted: the budget's headroom does not hold their instance time's bound. */
  readonly gpuHeldBack: number;
  /** What the wave read again of the stored readings under an edited design, and the settled shards it listed again (rereadLines). */
  readonly notices: readonly string[];
}

/**
 * Plans the next wave: the phases not yet run whose inputs have all run. The first wave also
 * refuses a campaign above its cap, sets the budget, hands back the reservations of an execution
 * that died, and writes plan.json.
 */
export async function planWave(a: PlanWaveArgs): Promise<PlanWaveResult> {
  const { ctx, plan, store, ledger } = a;
  const { campaign, graph } = ctx;
  const first = a.phasesRun.length === 0;
  let released = 0;
  // Before anything is registered or spent: every GPU model has a queue, and its weights are there.
  checkGpuQueues(ctx, a.gpuQueues);
  checkBedrockBatch(ctx, a.bedrockBatch);
  if (first) {
    await checkGpuWeights(ctx, store);
    assertWithinBudget(campaign, plan, a.allowPartial === true);
    await ledger.initCampaign(campaign.name, campaign.budget_usd, a.execution);
    // The fence is this execution's now: workers of an earlier one (stopped, or left running by a
    // failed one) reserve nothing more. Until they have committed and returned, their items are
    // not all marked, so nothing is listed before they are gone.
    await waitForFencedWorkers(ledger, campaign.name, a.execution, Math.max(0, a.remainingMs() - FENCE_WAIT_MARGIN_MS), a.fencePollMs);
    // Reservations of an execution that died (a worker killed at its timeout): its journal died with
    // it, so nothing can show which calls came back. They count as possibly billed, never released.
    // Open provider batches keep theirs, and their workers re-attach.
    released = (await ledger.orphanStale(campaign.name, a.execution, 'bill')).count;
    // Partitions the campaign file dropped since the last execution leave the counts (their replies stay).
    await retireDroppedPartitions(ledger, plan);
    await store.put(`${PREFIX.campaigns}${campaign.name}/plan.json`, JSON.stringify(plan, null, 2));
  }
  const ran = new Set(a.phasesRun);
  const ready = graph.phases.filter((p) => !ran.has(p.name) && p.after.every((ref) => ran.has(ref.phase)));
  // Parts committed by a worker killed before it moved them out of staging: into the tables at the
  // start, and again before the SQL stage reads them (lib/store/stagedParts.ts).
  if (first || ready.length === 0) await publishCommitted(store, ledger, campaign.name, graph.phases.map((p) => p.name));
  const waveIndex = graph.waves.findIndex((w) => w.some((p) => ready.includes(p)));
  const copies = waveCopies(ctx, ready, a.maxWorkerCopies);
  const shards: Shard[] = [];
  const gpuShards = new Map<ModelEntry, Shard[]>();
  const perPhase: Record<string, number> = {};
  let unregistered = 0;
  const design = await designDigest(store, ctx);
  const rereads: StoredReread[] = [];
  const relisted: Record<string, number> = {};
  for (const phase of ready) {
    // Stored readings the edited design would read otherwise, read again before anything is listed (free).
    const reread = await rereadStoredReadings({ ctx, store, writer: a.writer, phase, design, scratch: join(a.scratch ?? tmpdir(), 'sondage-reread'), mayStart: () => a.remainingMs() > PLAN_RESERVE_MS });
    if (reread) rereads.push(reread);
    const listed =
      phase.after.length === 0
        ? await rootShards(a, phase, copies)
        : await dependentShards(a, phase, copies, design);
    if (listed.relisted) relisted[phase.name] = listed.relisted;
    unregistered += listed.unregistered;
    perPhase[phase.name] = listed.shards.length;
    for (const { shard, gpu } of listed.shards) {
      if (gpu) gpuShards.set(gpu, [...(gpuShards.get(gpu) ?? []), shard]);
      else shards.push(shard);
    }
  }
  const n = Math.max(0, waveIndex);
  const lambdaKey = manifestKey(a.execution, n, 'lambda');
  await store.put(lambdaKey, JSON.stringify(shards));
  const jobs: GpuJob[] = [];
  // Each child's first attempt reserves its instance time's bound when it starts (lib/gpu/instanceTime.ts):
  // no more children are submitted than the budget's headroom holds bounds for. The rest stay pending.
  let headroom = gpuShards.size > 0 ? headroomOf(await ledger.budget(campaign.name)) : 0;
  let gpuHeldBack = 0;
  for (const [entry, list] of gpuShards) {
    const key = manifestKey(a.execution, n, 'gpu', entry.id);
    // One child per group of about an hour of work at each shard's phase throughput.
    const groups = packShards(list, (s) => gpuSeconds(ctx, ctx.graph.get(s.phase), entry, s.end - s.start), GPU_JOB.shardSeconds);
    const bound = instanceBound(entry.gpu!, GPU_JOB.attemptTimeoutSeconds).usd;
    const affordable = groups.slice(0, Math.max(0, Math.floor((headroom + CAP_SLACK_USD) / bound)));
    gpuHeldBack += groups.length - affordable.length;
    if (affordable.length === 0) continue;
    headroom -= affordable.length * bound;
    await store.put(key, JSON.stringify(affordable));
    jobs.push(gpuJob(a, entry, n, key, affordable.length, affordable.reduce((sum, g) => sum + g.length, 0)));
  }
  const lambda: WaveMap = {
    manifestKey: lambdaKey,
    shardCount: shards.length,
    maxConcurrency: copies,
    // A failed worker batch is an infrastructure failure (a failed call is a stored reply, not an
    // exception). With the default 0 the Map fails, the failure is recorded, and a re-started
    // execution resumes; a campaign may tolerate some (`aws.tolerated_failure_percentage`), whose
    // items the worker's give-up step records failed (lib/run/giveUpShards.ts).
    toleratedFailurePercentage: campaign.aws.tolerated_failure_percentage,
    pollSeconds: pollSeconds(ctx, ready),
  };
  const phasesRun = [...a.phasesRun, ...ready.map((p) => p.name)];
  const sources = athenaSources(a.glueDatabase, ctx.battery.name, campaign.name, campaign.models.map((m) => m.id), undefined, ctx.design.languages);
  return {
    output: {
      wave: { phases: ready.map((p) => p.name), lambda, gpu: { shardCount: jobs.reduce((sum, j) => sum + j.shards, 0), jobs } },
      phasesRun,
      done: ready.length === 0,
      analysis: { queryString: ctx.battery.analysis.firstQuery(sources) },
      expectedCostUsd: plan.totals.costUsd,
      capUsd: campaign.budget_usd,
    },
    shards: perPhase,
    unregistered,
    released,
    gpuHeldBack,
    notices: rereadLines(rereads, relisted),
  };
}

/** Float slack when a bound fits the headroom exactly. */
const CAP_SLACK_USD = 1e-9;

/** What the cap still holds: spend, reservations (orphaned ones among them) and possibly billed calls taken out. */
function headroomOf(b: BudgetState): number {
  return b.cap_usd - b.spent_usd - b.reserved_usd - b.possibly_billed_usd;
}

/**
 * A root phase's shards: each model × language partition in expansion order, cut by the answering
 * model's shard size (one shard per partition in batch mode: the ledger keeps open batches per
 * partition, so one worker must own them all). Items are registered here, so that a shard is
 * listed only if the ledger still has one of its items pending, and the partition's registeredKey
 * marker tells its workers not to register them again. Prompts are a pure function of the design:
 * written once. With less than PLAN_RESERVE_MS left, a partition not yet registered is listed
 * whole and left unmarked. With `retryFailed`, items failed permanently count as pending.
 */
async function rootShards(a: PlanWaveArgs, phase: PhaseSpec, copies: number): Promise<{ shards: RoutedShard[]; unregistered: number; relisted?: number }> {
  const { ctx, store, ledger } = a;
  const { campaign } = ctx;
  const shards: RoutedShard[] = [];
  let unregistered = 0;
  for (const model of campaign.models) {
    const entry = answererOf(ctx, phase, model);
    for (const language of ctx.design.languages) {
      const items = new PartitionItems({ ctx, model, language }).items(phase.name);
      const ids = items.map((i) => i.item_id);
      await ensurePrompts(a.writer, store, { campaign: campaign.name, phase: phase.name, model: model.id, language }, items, ctx.battery.prompts);
      const marker = registeredKey(campaign.name, phase.name, { model: model.id, language });
      const digest = registeredDigest(ids);
      // A marker of other ids (the design changed since): registered again, new ids only written.
      const body = await store.get(marker);
      const marked = body !== undefined && Buffer.from(body).toString('utf8') === digest;
      let pending: ReadonlySet<string> | undefined;
      if (a.remainingMs() > PLAN_RESERVE_MS) {
        if (!marked) {
          await ledger.registerPartition(campaign.name, { phase: phase.name, model: model.id, language }, ids);
          await store.put(marker, digest);
        }
        pending = await ledger.pendingAmong(campaign.name, { phase: phase.name, model: model.id, language }, ids, { retryFailed: a.retryFailed });
      } else if (!marked) unregistered++;
      const gpu = entry.runs_on === 'gpu' ? entry : undefined;
      const size = entry.mode === 'batch' ? items.length : gpu ? gpuShardItems(ctx, phase, gpu) : shardItems(entry, copies);
      for (const { start, end } of slices(items.length, size)) {
        // Without the pending check every slice is listed: a worker finds a finished one done and asks nothing.
        if (!pending || ids.slice(start, end).some((id) => pending.has(id))) {
          shards.push({ shard: { phase: phase.name, model: model.id, language, start, end, mode: entry.mode }, ...(gpu ? { gpu } : {}) });
        }
      }
    }
  }
  return { shards, unregistered };
}

/**
 * A dependent phase's shards: slices of each partition's items of its first input phase that hold
 * at least one item the phase builds on (`consumes`), cut by the answering model's shard size, or
 * the whole partition for a phase cut by partition; without those a previous execution finished
 * (shardDoneKey, under the design as uploaded now: a shard settled under another design is listed
 * again, since the edit may have changed its items). Its items depend on the stored replies, so the worker builds them. With
 * `retryFailed` the done markers are passed over: a marker leaves items failed permanently behind,
 * and an input item asked again may bring a reply this phase has not read; the worker finds the rest done.
 */
async function dependentShards(a: PlanWaveArgs, phase: PhaseSpec, copies: number, design: string): Promise<{ shards: RoutedShard[]; unregistered: number; relisted: number }> {
  const { ctx, store } = a;
  const { campaign } = ctx;
  const source = phase.after[0]!.phase;
  const markers = a.retryFailed ? [] : await store.list(`${PREFIX.campaigns}${campaign.name}/${phase.name}/_shards/`);
  const done = new Set(markers);
  // Shards settled under another design (or before markers named one): listed again, and counted for the notice.
  const settledBefore = new Set(markers.map(shardOfDoneKey));
  let relisted = 0;
  const shards: RoutedShard[] = [];
  for (const model of campaign.models) {
    const entry = answererOf(ctx, phase, model);
    for (const language of ctx.design.languages) {
      const sources = new PartitionItems({ ctx, model, language }).items(source);
      const consumed = sources.map((i) => phase.consumes?.(i) ?? true);
      const gpu = entry.runs_on === 'gpu' ? entry : undefined;
      const size =
        (phase.shard ?? 'by-source') === 'partition' || entry.mode === 'batch'
          ? Math.max(1, sources.length)
          : gpu
            ? gpuShardItems(ctx, phase, gpu)
            : shardItems(entry, copies);
      for (const { start, end } of slices(sources.length, size)) {
        const shard: Shard = { phase: phase.name, model: model.id, language, start, end, mode: entry.mode };
        const key = shardDoneKey(campaign.name, phase.name, shard, design);
        if (consumed.slice(start, end).some(Boolean) && !done.has(key)) {
          shards.push({ shard, ...(gpu ? { gpu } : {}) });
          if (settledBefore.has(shardOfDoneKey(key))) relisted++;
        }
      }
    }
  }
  return { shards, unregistered: 0, relisted };
}

/**
 * The AWS Batch job of one GPU model's shards in a wave: its queue (instance type and capacity),
 * its resources (the model's GPUs and their share of the instance) and the environment the job's
 * worker reads (GPU_ENV). A wave with more children than Batch's largest array is refused: the
 * campaign's throughput would put over a year of GPU time in one wave (GPU_JOB.shardSeconds a child).
 */
function gpuJob(a: PlanWaveArgs, entry: ModelEntry, wave: number, key: string, children: number, shards: number): GpuJob {
  const gpu = entry.gpu!;
  const jobQueue = a.gpuQueues?.[gpuQueueKey(gpu.instance_type, gpu.capacity)];
  if (jobQueue === undefined) throw new Error(`unreachable: checkGpuQueues let ${entry.id} through without a queue`);
  if (children > GPU_JOB.maxArraySize) {
    throw new SondageError(
      `${a.ctx.campaign.file}: model ${entry.id} needs ${children} GPU job children in one wave, past AWS Batch's largest array (${GPU_JOB.maxArraySize}); ` +
        'raise its gpu.prompts_per_second if the model is faster than that, or split the campaign',
    );
  }
  const r = jobResources(gpu.instance_type, gpu.gpus);
  const env: Record<string, string> = {
    [GPU_ENV.campaign]: a.ctx.campaign.name,
    [GPU_ENV.execution]: a.execution,
    [GPU_ENV.manifestKey]: key,
    [GPU_ENV.model]: entry.id,
    [GPU_ENV.retryFailed]: String(a.retryFailed),
    // A plain job (one child) has no AWS_BATCH_JOB_ARRAY_INDEX: it is told its group.
    ...(children === 1 ? { [GPU_ENV.shardIndex]: '0' } : {}),
  };
  return {
    model: entry.id,
    instanceType: gpu.instance_type,
    capacity: gpu.capacity,
    jobQueue,
    jobName: gpuJobName(a.execution, wave, entry.id),
    manifestKey: key,
    children,
    shards,
    resources: [
      { Type: 'GPU', Value: String(r.gpus) },
      { Type: 'VCPU', Value: String(r.vcpus) },
      { Type: 'MEMORY', Value: String(r.memoryMib) },
    ],
    environment: Object.entries(env).map(([Name, Value]) => ({ Name, Value })),
  };
}
