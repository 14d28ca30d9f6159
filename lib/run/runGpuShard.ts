/**
 * The GPU worker (docs/gpu.md): one AWS Batch array child runs
 * the group of shards at its array index in its job's manifest, against the vLLM server the job
 * started for its model. It is the Lambda worker's runShards with three differences: the model's
 * `base_url` is the job's own server; hundreds of calls stay in flight (continuous batching wants
 * them); and its deadline is a signal the job fires on SIGTERM (Spot reclaim) or before the
 * attempt's timeout. The ledger and budget protocol, the Parquet layout, the readers and the
 * candidate-logprob path are the same code, so a reply is the same whichever route asked it.
 *
 * A child that fails or is reclaimed is retried by Batch: it re-expands its shards, asks only the
 * items the ledger still has pending, and adopts nothing twice (the ledger's idempotency, as for
 * the Lambda worker).
 */
import { isShard } from '../config/pipeline.js';
import type { Shard, WorkerOutput } from '../config/pipeline.js';
import type { ModelEntry } from '../design/campaign.js';
import { SondageError } from '../errors.js';
import { answererOf } from './context.js';
import type { RunContext } from './context.js';
import type { ParquetIo } from './parquetIo.js';
import { duckdbParquetIo } from './parquetIoDuckDb.js';
import { runShards } from './runShards.js';
import type { ShardRunnerDeps } from './shardRunnerDeps.js';

/** What one array child is told (GPU_ENV, AWS_BATCH_JOB_ARRAY_INDEX). */
export interface GpuShardEvent {
  readonly campaign: string;
  readonly execution: string;
  readonly manifestKey: string;
  /** The child's index in the manifest (its group of shards). */
  readonly index: number;
  /** Campaign id of the entry the job serves (GpuJob.model). */
  readonly model: string;
  readonly retryFailed: boolean;
}

export interface GpuShardDeps extends Omit<ShardRunnerDeps, 'parquet'> {
  /** How parts are written and read (default: DuckDB, which the GPU image carries). */
  readonly parquet?: ParquetIo;
  /** The job's vLLM (`http://127.0.0.1:8000/v1`); absent for a simulated model, which needs none. */
  readonly baseUrl?: string;
}

/** A manifest line that is not a Shard: a configuration mistake, retrying cannot help. */
export class ManifestError extends SondageError {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

/**
 * The group of shards at `index` of a job's manifest (a JSON array of Shard arrays, one per child).
 * @throws ManifestError when the manifest is missing, not a list of shard groups, or has no such index
 */
export async function gpuShardsAt(deps: Pick<ShardRunnerDeps, 'store'>, manifestKey: string, index: number): Promise<Shard[]> {
  const body = await deps.store.get(manifestKey);
  if (body === undefined) throw new ManifestError(`GPU job: no shard manifest at ${manifestKey} (the plan writes it before it submits the job)`);
  let list: unknown;
  try {
    list = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch (err) {
    throw new ManifestError(`GPU job: ${manifestKey} is not JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(list)) throw new ManifestError(`GPU job: ${manifestKey} is not a list of shard groups`);
  if (!Number.isInteger(index) || index < 0 || index >= list.length) {
    throw new ManifestError(`GPU job: array index ${index} is outside ${manifestKey}, which has ${list.length} group(s)`);
  }
  const group: unknown = list[index];
  if (!Array.isArray(group) || group.length === 0 || !group.every(isShard)) {
    throw new ManifestError(`GPU job: ${manifestKey}[${index}] is not a list of shards: ${JSON.stringify(group).slice(0, 200)}`);
  }
  return group;
}

/**
 * The context with the served entry's `base_url` pointed at the job's own server: the models under
 * test and the roles, wherever the entry sits, and its prompts priced at nothing (the job's
 * instance time is its charge). Everything else (settings, item ids) is unchanged, so the replies
 * are those `sondage run` would get from the same server.
 */
export function servedBy(ctx: RunContext, model: string, baseUrl: string | undefined): RunContext {
  const found = [...ctx.campaign.models, ...Object.values(ctx.campaign.roles)].find((e) => e.id === model);
  if (!found) throw new ManifestError(`GPU job: model ${JSON.stringify(model)} is not an entry of campaign ${ctx.campaign.name}`);
  if (found.runs_on !== 'gpu') throw new ManifestError(`GPU job: model ${model} of campaign ${ctx.campaign.name} does not run on a GPU (runs_on: lambda)`);
  // Its prompts cost nothing here: the job's instance time is reserved and settled instead (lib/gpu/instanceTime.ts).
  const billed = { ...ctx, instanceBilled: new Set([...(ctx.instanceBilled ?? []), model]) };
  if (baseUrl === undefined || found.provider === 'simulated') return billed;
  const swap = <E extends ModelEntry>(e: E): E => (e.id === model ? { ...e, base_url: baseUrl } : e);
  return {
    ...billed,
    campaign: {
      ...ctx.campaign,
      models: ctx.campaign.models.map(swap),
      roles: Object.fromEntries(Object.entries(ctx.campaign.roles).map(([k, v]) => [k, swap(v)])),
    },
  };
}

/**
 * Runs one array child's group of shards. `pending` > 0 in the result means the deadline
 * (SIGTERM, or the attempt's time) stopped it with items left: what it had is committed, and the
 * job exits to be retried.
 * @example await runGpuShard(ctx, { campaign, execution, manifestKey, index: 3, model: 'qwen3-8b', retryFailed: false }, deps)
 */
export async function runGpuShard(ctx: RunContext, e: GpuShardEvent, deps: GpuShardDeps): Promise<WorkerOutput & { readonly shards: readonly Shard[] }> {
  if (ctx.campaign.name !== e.campaign) throw new ManifestError(`GPU job: told campaign ${e.campaign}, loaded ${ctx.campaign.name}`);
  const shards = await gpuShardsAt(deps, e.manifestKey, e.index);
  // Every shard must be answered by the model this job serves, never by another (an API) behind its back.
  for (const shard of shards) {
    const phase = ctx.graph.phases.find((p) => p.name === shard.phase);
    const subject = ctx.campaign.models.find((m) => m.id === shard.model);
    if (phase && subject && answererOf(ctx, phase, subject).id !== e.model) {
      throw new ManifestError(`GPU job: a shard of ${e.manifestKey}[${e.index}] (${shard.phase} of ${shard.model}) is not answered by ${e.model}, the model this job serves`);
    }
  }
  const served = servedBy(ctx, e.model, deps.baseUrl);
  const gpu = [...ctx.campaign.models, ...Object.values(ctx.campaign.roles)].find((m) => m.id === e.model)?.gpu;
  // Parts are committed on a timer as well as when full: a job killed without warning loses at most gpu.commit_minutes of work.
  const partMs = deps.partMs ?? (gpu ? gpu.commit_minutes * 60_000 : undefined);
  const out = await runShards(
    served,
    { Items: shards, BatchInput: { campaign: e.campaign, execution: e.execution, retryFailed: e.retryFailed, copies: 1 } },
    {
      ...deps,
      parquet: deps.parquet ?? duckdbParquetIo,
      ...(partMs !== undefined ? { partMs } : {}),
      // Four chunks fill the in-flight window; a timed part is committed when its timer fires, whatever its chunks still have in flight.
      chunkSize: deps.chunkSize ?? Math.max(1, Math.ceil((deps.inFlight ?? 64) / 4)),
    },
  );
  return { ...out, shards };
}
