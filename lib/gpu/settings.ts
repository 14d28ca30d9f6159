/**
 * A model entry's `gpu:` block (with `runs_on: gpu`): where and how its vLLM server runs on AWS
 * Batch, and the throughput the plan prices it at. The schema applies the defaults; the rules that
 * span fields (an instance type for `runs_on: gpu`, weights, the memory estimate) are in
 * checkGpuEntry.ts.
 */
import { z } from 'zod';
import { GPU_INSTANCE_TYPES } from './instances.js';
import type { GpuCapacity } from './instances.js';
import { DEFAULT_GPU_MEMORY_UTILIZATION, WEIGHT_DTYPES } from './memory.js';
import type { WeightDtype } from './memory.js';

/** Key prefix in the stack's data bucket under which model weights are uploaded (the job role reads only this). */
export const WEIGHTS_PREFIX = 'weights/';

/** Requests the GPU worker keeps in flight for vLLM's continuous batching (vLLM's own default batch is 256 sequences). */
export const DEFAULT_IN_FLIGHT = 256;
/**
 * Minutes between a GPU job's part commits, full or not: a Spot instance reclaimed without the
 * notice being seen, or a job killed outright, loses at most this much work (its replies are
 * asked again by the retry). A commit is a Parquet part and one ledger transaction: cheap.
 */
export const DEFAULT_COMMIT_MINUTES = 5;
/** Seconds the job waits for vLLM's /health before it gives up (loading a 70B model from S3 takes minutes). */
export const DEFAULT_STARTUP_TIMEOUT_S = 1200;

/**
 * Prompts per second assumed when the campaign states none, per kind of phase: a phase that asks
 * at most PROBE_MAX_TOKENS tokens (P(True)'s verify) is a prefill-bound probe, any other a
 * generation. Low on purpose (an 8B model on one A10G does several times more): the plan and the
 * budget then err towards more GPU hours, and `bench/gpu-probe.sh` measures the real numbers.
 */
export const DEFAULT_PROMPTS_PER_SECOND = { generation: 2, probe: 20 } as const;
export const PROBE_MAX_TOKENS = 8;

const dtypeList = WEIGHT_DTYPES.join(', ');
const instanceList = GPU_INSTANCE_TYPES.join(', ');
const show = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : String(v));

export const gpuSettingsSchema = z
  .strictObject({
    instance_type: z
      .enum(GPU_INSTANCE_TYPES, {
        error: (iss) =>
          iss.input === undefined
            ? `is required; the EC2 instance type of the model's AWS Batch queue, one of ${instanceList}`
            : `${show(iss.input)} is not a GPU instance type sondage knows; use one of ${instanceList}`,
      })
      .meta({ description: 'EC2 GPU instance type; the stack must have a queue for it (-c sondage:gpuInstanceTypes)' }),
    gpus: z.int().min(1).optional().meta({ description: "GPUs of the instance the model uses (vLLM's tensor-parallel size); default all of them" }),
    capacity: z.enum(['spot', 'on-demand'], { error: (iss) => `${show(iss.input)} is not a capacity; use spot or on-demand` }).default('spot'),
    weights_prefix: z
      .string()
      .regex(/^weights\/[A-Za-z0-9._/-]+\/$/, { error: (iss) => `${show(iss.input)} is not a weights prefix; use a key prefix under weights/ ending in "/", e.g. weights/qwen3-8b/` })
      .optional()
      .meta({ description: 'Key prefix in the data bucket where the model files (config.json, *.safetensors, tokenizer) were uploaded' }),
    hub: z.boolean().optional().meta({ description: 'Download `model` from the Hugging Face Hub instead (token: HF_TOKEN in the provider secret, if any)' }),
    revision: z.string().min(1).optional().meta({ description: 'Hub revision (commit) to download; pin it for a reproducible run' }),
    dtype: z
      .enum(WEIGHT_DTYPES, { error: (iss) => `${show(iss.input)} is not a weight dtype; use one of ${dtypeList}` })
      .default('bfloat16')
      .meta({ description: 'Weight dtype of the checkpoint (for the memory estimate; fp8/int8/int4 checkpoints carry their quantization)' }),
    params_b: z.number().positive().optional().meta({ description: 'Billions of parameters; default read from the model name (Qwen3-8B → 8)' }),
    max_model_len: z.int().min(256).optional().meta({ description: "vLLM --max-model-len: context length; default the model's" }),
    gpu_memory_utilization: z.number().min(0.3).max(0.98).default(DEFAULT_GPU_MEMORY_UTILIZATION),
    in_flight: z.int().min(1).max(4096).default(DEFAULT_IN_FLIGHT).meta({ description: 'Requests kept in flight for continuous batching' }),
    prompts_per_second: z
      .union([z.number().positive(), z.record(z.string(), z.number().positive())], {
        error: (iss) => `expected prompts per second, a number or one per phase ({ generate: 6, verify: 40 }), got ${show(iss.input)}`,
      })
      .optional()
      .meta({ description: 'Measured or stated throughput (bench/gpu-probe.sh), per phase or for all; the plan and the budget price GPU hours with it' }),
    startup_timeout_s: z.int().min(30).default(DEFAULT_STARTUP_TIMEOUT_S),
    commit_minutes: z
      .number()
      .positive()
      .max(240)
      .default(DEFAULT_COMMIT_MINUTES)
      .meta({ description: 'Minutes between part commits: what a Spot reclaim or a hard kill can lose at most' }),
    extra_args: z.array(z.string()).optional().meta({ description: 'More `vllm serve` arguments, passed as given' }),
  })
  .meta({ description: 'Where and how a runs_on: gpu model is served (AWS Batch + vLLM)' });

/** The `gpu:` block with its defaults applied. */
export interface GpuSettings {
  readonly instance_type: string;
  readonly gpus?: number;
  readonly capacity: GpuCapacity;
  readonly weights_prefix?: string;
  readonly hub?: boolean;
  readonly revision?: string;
  readonly dtype: WeightDtype;
  readonly params_b?: number;
  readonly max_model_len?: number;
  readonly gpu_memory_utilization: number;
  readonly in_flight: number;
  readonly prompts_per_second?: number | Readonly<Record<string, number>>;
  readonly startup_timeout_s: number;
  readonly commit_minutes: number;
  readonly extra_args?: readonly string[];
}

/** Prompts per second a phase is priced at: the campaign's, else the default for its kind. */
export interface Throughput {
  readonly promptsPerSecond: number;
  /** True when the campaign states it (measured); false for the default assumption. */
  readonly stated: boolean;
}

/**
 * The throughput a phase of a GPU model is priced at.
 * @example promptsPerSecond({ prompts_per_second: { verify: 40 } } as GpuSettings, 'verify', 1) // { promptsPerSecond: 40, stated: true }
 */
export function promptsPerSecond(gpu: Pick<GpuSettings, 'prompts_per_second'>, phase: string, maxTokens: number | undefined): Throughput {
  const given = gpu.prompts_per_second;
  if (typeof given === 'number') return { promptsPerSecond: given, stated: true };
  if (given && Object.hasOwn(given, phase)) return { promptsPerSecond: given[phase]!, stated: true };
  const probe = maxTokens !== undefined && maxTokens <= PROBE_MAX_TOKENS;
  return { promptsPerSecond: probe ? DEFAULT_PROMPTS_PER_SECOND.probe : DEFAULT_PROMPTS_PER_SECOND.generation, stated: false };
}
