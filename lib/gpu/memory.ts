/**
 * Whether a model fits the GPU memory of its instance, estimated before anything is deployed or
 * spent: parameters × bytes per parameter of its dtype × an overhead factor for what vLLM needs
 * beside the weights, against the share of GPU memory vLLM takes. It is an estimate, and every
 * message says so: a checkpoint's real size, the KV cache a long context needs and CUDA graphs vary.
 */
import type { GpuInstance } from './instances.js';

/** Weight dtypes the estimate knows, and their bytes per parameter (int4: AWQ/GPTQ 4-bit). */
export const DTYPE_BYTES = { bfloat16: 2, float16: 2, float32: 4, fp8: 1, int8: 1, int4: 0.5 } as const;
export type WeightDtype = keyof typeof DTYPE_BYTES;
export const WEIGHT_DTYPES = Object.keys(DTYPE_BYTES) as [WeightDtype, ...WeightDtype[]];

/**
 * Memory beside the weights, as a share of them: activations, CUDA graphs and the smallest KV
 * cache that serves a batch. 20 % is what vLLM's own memory profiling leaves for an 8B model at a
 * few thousand tokens of context; a long max_model_len needs more.
 */
export const OVERHEAD_FACTOR = 1.2;

/** vLLM's default `--gpu-memory-utilization`: the share of each GPU it takes. */
export const DEFAULT_GPU_MEMORY_UTILIZATION = 0.9;

/**
 * Billions of parameters read from a model name, or undefined: `Qwen/Qwen3-8B` → 8,
 * `Qwen2.5-0.5B-Instruct` → 0.5, `Mixtral-8x7B` → 56 (experts counted in full: all are loaded),
 * `bloom-560m` → 0.56. The last size in the name wins (`Llama-3.1-70B` → 70).
 */
export function paramsFromName(model: string): number | undefined {
  const name = model.split('/').at(-1) ?? model;
  const moe = /(?:^|[^0-9.])(\d+)x(\d+(?:\.\d+)?)b(?![a-z])/i.exec(name);
  if (moe) return Number(moe[1]) * Number(moe[2]);
  const sizes = [...name.matchAll(/(?:^|[^0-9.a-z])(\d+(?:\.\d+)?)([bm])(?![a-z])/gi)];
  const last = sizes.at(-1);
  if (!last) return undefined;
  const n = Number(last[1]);
  return last[2]!.toLowerCase() === 'm' ? n / 1000 : n;
}

export interface MemoryEstimate {
  readonly paramsB: number;
  readonly dtype: WeightDtype;
  /** Estimated GiB the model needs across its GPUs. */
  readonly needGiB: number;
  /** GiB vLLM gets: gpus × GPU memory × utilization. */
  readonly haveGiB: number;
  readonly fits: boolean;
  /** The estimate's arithmetic, for messages and `plan`. */
  readonly explain: string;
}

/**
 * The estimate for `paramsB` billion parameters of `dtype` on `gpus` GPUs of an instance.
 * @example estimateGpuMemory(8, 'bfloat16', gpuInstance('g5.xlarge'), 1).fits === true // ≈ 17.9 of 21.6 GiB
 */
export function estimateGpuMemory(paramsB: number, dtype: WeightDtype, inst: GpuInstance, gpus: number, utilization = DEFAULT_GPU_MEMORY_UTILIZATION): MemoryEstimate {
  const needGiB = (paramsB * 1e9 * DTYPE_BYTES[dtype] * OVERHEAD_FACTOR) / 2 ** 30;
  const haveGiB = gpus * inst.gpu_memory_gib * utilization;
  const explain =
    `about ${needGiB.toFixed(1)} GiB of GPU memory (an estimate: ${paramsB} B parameters × ${DTYPE_BYTES[dtype]} bytes (${dtype}) × ${OVERHEAD_FACTOR} for activations and the KV cache), ` +
    `against ${haveGiB.toFixed(1)} GiB vLLM gets (${gpus} × ${inst.gpu_memory_gib} GiB ${inst.gpu} at gpu_memory_utilization ${utilization})`;
  return { paramsB, dtype, needGiB, haveGiB, fits: needGiB <= haveGiB, explain };
}
