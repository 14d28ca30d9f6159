/**
 * The campaign rules of a model entry's `runs_on` and `gpu:` fields that span fields, checked by
 * the campaign parser next to the schema's own (so `sondage plan` reports them with file, field
 * and line, before anything is deployed or spent): an instance type for `runs_on: gpu`, a provider
 * vLLM can stand for, where the weights come from, and whether the model fits the GPU memory.
 */
import { GPU_INSTANCE_TYPES, gpuInstance } from './instances.js';
import { estimateGpuMemory, paramsFromName, WEIGHT_DTYPES } from './memory.js';
import type { WeightDtype } from './memory.js';
import { DEFAULT_GPU_MEMORY_UTILIZATION } from './memory.js';

/** An issue at a path inside the entry (`['gpu', 'instance_type']`). */
export interface EntryIssue {
  readonly at: readonly string[];
  readonly message: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Providers a GPU job can serve: vLLM speaks OpenAI's API; a simulated model needs no server (a dry run). */
const GPU_PROVIDERS = ['openai-compatible', 'simulated'];

/**
 * The issues of one raw model entry (as written in the file) about where it runs.
 * @example checkGpuEntry({ id: 'q', provider: 'openai-compatible', model: 'Qwen/Qwen3-8B', runs_on: 'gpu' })[0].at // ['gpu', 'instance_type']
 */
export function checkGpuEntry(m: Readonly<Record<string, unknown>>): EntryIssue[] {
  const out: EntryIssue[] = [];
  const add = (at: readonly string[], message: string): void => {
    out.push({ at, message });
  };
  const gpu = m.gpu;
  if (m.runs_on !== 'gpu') {
    if (gpu !== undefined) add(['gpu'], 'gpu settings apply only to a model that runs_on: gpu; add runs_on: gpu, or remove gpu');
    return out;
  }
  const provider = typeof m.provider === 'string' ? m.provider : undefined;
  if (provider !== undefined && !GPU_PROVIDERS.includes(provider)) {
    add(['provider'], `runs_on: gpu serves the model with vLLM, which speaks the OpenAI API: use provider openai-compatible (or simulated, for a dry run); got ${provider}`);
  }
  if (m.mode === 'batch') add(['mode'], 'runs_on: gpu runs on its own server, not a provider batch API; use mode: sync');
  if (m.price !== undefined) {
    add(['price'], 'a runs_on: gpu model is charged for its instance hours (gpu.instance_type, at gpu.prompts_per_second), not a token price; remove price');
  }
  if (!isRecord(gpu) || gpu.instance_type === undefined) {
    if (gpu === undefined || isRecord(gpu)) {
      add(['gpu', 'instance_type'], `is required for runs_on: gpu; the EC2 instance type of the model's AWS Batch queue, one of ${GPU_INSTANCE_TYPES.join(', ')}`);
    }
    return out;
  }
  const type = typeof gpu.instance_type === 'string' && (GPU_INSTANCE_TYPES as readonly string[]).includes(gpu.instance_type) ? gpu.instance_type : undefined;
  if (type === undefined) return out; // the schema names the bad type
  const inst = gpuInstance(type);
  const gpus = typeof gpu.gpus === 'number' && Number.isInteger(gpu.gpus) ? gpu.gpus : inst.gpus;
  if (gpus > inst.gpus) add(['gpu', 'gpus'], `${type} has ${inst.gpus} GPU(s) (${inst.gpu}); ask for at most ${inst.gpus}, or choose a larger instance type`);

  if (provider === 'simulated') return out; // no server, no weights, nothing to fit
  if (gpu.weights_prefix === undefined && gpu.hub !== true) {
    add(
      ['gpu', 'weights_prefix'],
      `is required for runs_on: gpu: the key prefix in the stack's data bucket where the model's files are uploaded (e.g. weights/${slug(m.model)}/), or set gpu.hub: true to download ${show(m.model)} from the Hugging Face Hub`,
    );
  }
  if (gpu.weights_prefix !== undefined && gpu.hub === true) add(['gpu', 'hub'], 'give either weights_prefix (weights uploaded to the bucket) or hub: true, not both');

  const dtype: WeightDtype = typeof gpu.dtype === 'string' && (WEIGHT_DTYPES as readonly string[]).includes(gpu.dtype) ? (gpu.dtype as WeightDtype) : 'bfloat16';
  const paramsB = typeof gpu.params_b === 'number' && gpu.params_b > 0 ? gpu.params_b : typeof m.model === 'string' ? paramsFromName(m.model) : undefined;
  if (paramsB === undefined) {
    if (typeof m.model === 'string') {
      add(['gpu', 'params_b'], `cannot tell how many parameters ${show(m.model)} has from its name; give params_b (billions), which the plan needs to check that it fits the GPU memory`);
    }
    return out;
  }
  const utilization = typeof gpu.gpu_memory_utilization === 'number' ? gpu.gpu_memory_utilization : DEFAULT_GPU_MEMORY_UTILIZATION;
  if (gpus > inst.gpus) return out;
  const est = estimateGpuMemory(paramsB, dtype, inst, gpus, utilization);
  if (!est.fits) {
    const bigger = GPU_INSTANCE_TYPES.filter((t) => estimateGpuMemory(paramsB, dtype, gpuInstance(t), gpuInstance(t).gpus, utilization).fits).sort(
      (a, b) => gpuInstance(a).on_demand_per_hour - gpuInstance(b).on_demand_per_hour,
    );
    const fix = bigger.length > 0 ? `choose an instance type with more GPU memory (the cheapest that fits: ${bigger[0]!}), use more of its GPUs, or a smaller dtype` : 'no instance type sondage knows fits it: use a quantized checkpoint (gpu.dtype fp8, int8 or int4)';
    add(['gpu', 'instance_type'], `${show(m.model)} needs ${est.explain}: it does not fit ${type}; ${fix}`);
  }
  return out;
}

function show(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : String(v);
}

function slug(model: unknown): string {
  const name = typeof model === 'string' ? (model.split('/').at(-1) ?? model) : 'my-model';
  return name.toLowerCase().replace(/[^a-z0-9._-]+/g, '-') || 'my-model';
}
