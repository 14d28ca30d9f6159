/**
 * What a prompt of a runs_on: gpu model costs: the GPU time it takes at the phase's throughput,
 * at the instance's hourly price. The ledger reserves and charges it per request, exactly as it
 * charges tokens for an API model, so one budget covers both routes (DESIGN.md "Cost and safety
 * rails"). The hour is the whole instance's, whatever `gpu.gpus` asks: on AWS a job is charged
 * all of its instance's GPUs (instanceTime.ts), and a prompt is priced as the AWS route charges it.
 * Time the job spends outside prompts (start-up, loading the weights, the idle tail) is not a
 * prompt's: `sondage plan --aws` shows it (lib/run/gpuCost.ts).
 */
import type { Price } from '../providers/types.js';
import { hourlyPrice } from './instances.js';
import type { GpuSettings, Throughput } from './settings.js';
import { promptsPerSecond } from './settings.js';

export interface GpuPhasePrice {
  /** Zero token prices and `per_request_usd`. */
  readonly price: Price;
  readonly throughput: Throughput;
  /** USD per hour of the whole instance (a job is charged all its GPUs, whether it uses them or not). */
  readonly hourlyUsd: number;
}

/**
 * The price of one prompt of `phase` (whose requests ask at most `maxTokens`).
 * @example gpuPhasePrice(gpu, 'verify', 1).price.per_request_usd // hourly / 3600 / prompts per second
 */
export function gpuPhasePrice(gpu: GpuSettings, phase: string, maxTokens: number | undefined): GpuPhasePrice {
  const hourlyUsd = hourlyPrice(gpu.instance_type, gpu.capacity);
  const throughput = promptsPerSecond(gpu, phase, maxTokens);
  return {
    price: { input_per_mtok: 0, output_per_mtok: 0, per_request_usd: hourlyUsd / 3600 / throughput.promptsPerSecond },
    throughput,
    hourlyUsd,
  };
}
