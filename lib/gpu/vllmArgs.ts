/**
 * The `vllm serve` command line of a GPU job: the model (a local folder of downloaded weights, or
 * the hub name), bound to loopback, served under the campaign's model name, with the entry's
 * tensor-parallel size, context length and memory share. Flags are the ones vLLM's OpenAI server
 * documents (docs.vllm.ai, "vllm serve"); anything else goes through `gpu.extra_args`.
 */
import type { GpuSettings } from './settings.js';
import { gpuInstance } from './instances.js';

/** Where the job's vLLM listens: loopback only, nothing outside the container reaches it. */
export const VLLM_HOST = '127.0.0.1';
export const VLLM_PORT = 8000;

/** Dtypes vLLM's `--dtype` takes; a quantized checkpoint (fp8, int8, int4) carries its own. */
const FLOAT_DTYPES = new Set(['bfloat16', 'float16', 'float32']);

export interface ServeTarget {
  /** The provider's model name: what requests send as `model` (`--served-model-name`). */
  readonly model: string;
  /** Local folder with the weights (downloaded from the bucket), or undefined to load `model` from the hub. */
  readonly weightsDir?: string;
  readonly gpu: GpuSettings;
  readonly port?: number;
}

/**
 * Arguments after `vllm serve`.
 * @example vllmServeArgs({ model: 'Qwen/Qwen3-8B', weightsDir: '/tmp/w', gpu })
 * // ['/tmp/w', '--host', '127.0.0.1', '--port', '8000', '--served-model-name', 'Qwen/Qwen3-8B', '--tensor-parallel-size', '1', …]
 */
export function vllmServeArgs(t: ServeTarget): string[] {
  const { gpu } = t;
  const tp = gpu.gpus ?? gpuInstance(gpu.instance_type).gpus;
  const args = [
    t.weightsDir ?? t.model,
    '--host',
    VLLM_HOST,
    '--port',
    String(t.port ?? VLLM_PORT),
    '--served-model-name',
    t.model,
    '--tensor-parallel-size',
    String(tp),
    '--gpu-memory-utilization',
    String(gpu.gpu_memory_utilization),
    // vLLM's batch is at most this many sequences; the worker keeps as many requests in flight.
    '--max-num-seqs',
    String(Math.min(gpu.in_flight, 1024)),
    // Sampling exactly as each request asks: no defaults taken from the checkpoint's
    // generation_config.json (top_p, top_k, repetition penalty), which would change what is measured.
    '--generation-config',
    'vllm',
  ];
  if (FLOAT_DTYPES.has(gpu.dtype)) args.push('--dtype', gpu.dtype);
  if (gpu.max_model_len !== undefined) args.push('--max-model-len', String(gpu.max_model_len));
  if (t.weightsDir === undefined && gpu.revision !== undefined) args.push('--revision', gpu.revision);
  args.push(...(gpu.extra_args ?? []));
  return args;
}

/** The base URL the worker's openai-compatible provider calls inside the job. */
export function vllmBaseUrl(port: number = VLLM_PORT): string {
  return `http://${VLLM_HOST}:${port}/v1`;
}
