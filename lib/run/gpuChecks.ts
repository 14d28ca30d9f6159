/**
 * What a campaign's runs_on: gpu models need of the deployed stack, checked before anything is
 * registered or spent (the plan's first wave, and `sondage start --aws` before it starts the
 * execution): a queue for each model's instance type and capacity, and its weights in the bucket.
 * The campaign file alone is checked by the parser (lib/gpu/checkGpuEntry.ts).
 */
import { gpuQueueKey, PREFIX } from '../config/index.js';
import type { ModelEntry } from '../design/campaign.js';
import { CampaignFileError, formatIssues } from '../errors.js';
import type { FileIssue } from '../errors.js';
import type { BlobStore } from '../store/types.js';
import { answeringEntries } from './context.js';
import type { RunContext } from './context.js';

/** A runs_on: gpu entry that answers a phase of the campaign, and where it sits in the file. */
export interface GpuEntry {
  readonly entry: ModelEntry & { readonly gpu: NonNullable<ModelEntry['gpu']> };
  /** `models[2]`, or a role's place (`judge`). */
  readonly path: string;
}

/** Every runs_on: gpu entry that answers a phase, once each. */
export function gpuEntries(ctx: Pick<RunContext, 'campaign' | 'graph'>): GpuEntry[] {
  return answeringEntries(ctx)
    .filter((a) => a.entry.runs_on === 'gpu' && a.entry.gpu !== undefined)
    .map((a) => {
      const i = ctx.campaign.models.indexOf(a.entry);
      return { entry: a.entry as GpuEntry['entry'], path: i >= 0 ? `models[${i}]` : (a.path ?? a.entry.id) };
    });
}

function fail(issues: FileIssue[]): never {
  throw new CampaignFileError(formatIssues(issues), issues);
}

/**
 * Refuses a campaign whose GPU models have no queue in the deployed stack (`queues`: the plan
 * function's ENV.gpuQueues; undefined when the stack has none).
 * @throws CampaignFileError naming each model's `gpu.instance_type` and the queues there are
 */
export function checkGpuQueues(ctx: Pick<RunContext, 'campaign' | 'graph'>, queues: Readonly<Record<string, string>> | undefined): void {
  const known = Object.keys(queues ?? {}).sort();
  const issues = gpuEntries(ctx).flatMap(({ entry, path }): FileIssue[] => {
    const key = gpuQueueKey(entry.gpu.instance_type, entry.gpu.capacity);
    if (queues && Object.hasOwn(queues, key)) return [];
    const types = [...new Set(known.map((k) => k.split('/')[0]!))];
    const message =
      queues === undefined
        ? `the deployed stack has no GPU queues; deploy it with \`npx cdk deploy -c sondage:gpu=true -c sondage:gpuInstanceTypes=${entry.gpu.instance_type}\``
        : `the deployed stack has no ${entry.gpu.capacity} queue for ${entry.gpu.instance_type} (it has ${types.join(', ') || 'none'}); ` +
          `choose one of those, or deploy with -c sondage:gpuInstanceTypes=${[...types, entry.gpu.instance_type].join(',')}`;
    return [{ file: ctx.campaign.file, path: `${path}.gpu.instance_type`, message }];
  });
  if (issues.length > 0) fail(issues);
}

/**
 * Refuses a campaign whose GPU models' weights are not in the bucket: each `gpu.weights_prefix`
 * must hold a config.json (what vLLM reads first). Models downloaded from the hub are not checked.
 * @throws CampaignFileError naming `gpu.weights_prefix`, the location looked at and how to upload
 */
export async function checkGpuWeights(ctx: Pick<RunContext, 'campaign' | 'graph'>, store: BlobStore, where = 'the data bucket'): Promise<void> {
  const issues: FileIssue[] = [];
  for (const { entry, path } of gpuEntries(ctx)) {
    const prefix = entry.gpu.weights_prefix;
    if (entry.provider === 'simulated' || prefix === undefined) continue;
    if (!prefix.startsWith(PREFIX.weights)) continue; // the parser refuses it
    const keys = await store.list(prefix);
    if (keys.includes(`${prefix}config.json`)) continue;
    issues.push({
      file: ctx.campaign.file,
      path: `${path}.gpu.weights_prefix`,
      message:
        keys.length === 0
          ? `nothing under ${prefix} in ${where}; upload the model's files there first (aws s3 sync <model folder> s3://<bucket>/${prefix}), or set gpu.hub: true`
          : `${prefix} in ${where} has ${keys.length} file(s) but no config.json; upload the whole model folder (config.json, tokenizer, *.safetensors)`,
    });
  }
  if (issues.length > 0) fail(issues);
}
