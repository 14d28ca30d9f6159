/**
 * What a GPU job attempt costs on AWS, charged as instance time rather than per prompt: an upper
 * bound reserved before the attempt does anything, and the wall-clock time it measured settled
 * at its end (start-up, weights, model load and every prompt included). On AWS the per-prompt GPU
 * price (gpuPrice.ts) is then zero in the job, so nothing is counted twice; the plan and a local
 * run against a vLLM server still price per prompt.
 *
 * The bound is an attempt's whole life: AWS Batch stops an attempt at the job definition's
 * timeout (SIGTERM, then SIGKILL 30 s later), before the container starts the instance boots
 * and pulls the image, and after the last job on it Batch keeps it for its scale-down delay
 * (IDLE_TAIL_SECONDS). The plan, before submitting, can only assume the time before the container
 * (GPU_JOB.startupMinutes); the attempt itself measures it on the instance (instanceClock.ts) and
 * reserves and settles with what it measured.
 *
 * The whole instance is charged, whatever `gpu.gpus` asks: the GPUs a job leaves free are billed
 * whether or not another job takes them, and nothing guarantees one will. It is not counted twice
 * where jobs do share an instance: each charges only the span after what the instance folder says
 * was charged already (instanceClock.ts). The bound is priced at on-demand, which a Spot price never
 * exceeds (a Spot request's default maximum); the settlement is at the capacity's catalog price.
 */
import { GPU_JOB } from '../config/sizing.js';
import { hourlyPrice } from './instances.js';
import type { GpuSettings } from './settings.js';

/** Seconds Batch lets a container run after the SIGTERM of a timeout, before SIGKILL. */
export const BATCH_KILL_GRACE_SECONDS = 30;

type Priced = Pick<GpuSettings, 'instance_type' | 'capacity'>;

/** Seconds of an attempt before its container starts (instance, image), as the plan assumes them; an attempt on AWS measures its own (instanceClock.ts). */
export const PRE_CONTAINER_SECONDS = GPU_JOB.startupMinutes * 60;

/**
 * Seconds an instance may stay billed after a job on it ends: the compute environments'
 * scale-down delay the stack sets, and the allowance for the scale-in to act (GPU_JOB). Each
 * attempt charges up to its end plus these, so the last job on an instance pays its idle minutes.
 */
export const IDLE_TAIL_SECONDS = (GPU_JOB.scaleDownDelayMinutes + GPU_JOB.scaleInAllowanceMinutes) * 60;

/**
 * The most one attempt can cost: `attemptSeconds` (the job definition's timeout) + Batch's kill
 * grace + the time before the container + the idle tail, at the whole instance's on-demand price.
 * @example instanceBound({ instance_type: 'g5.xlarge', capacity: 'spot' }, 4 * 3600).usd // (14400 + 30 + 600 + 1500) s at $1.006/h
 */
export function instanceBound(
  gpu: Priced,
  attemptSeconds: number,
  preContainerSeconds: number = PRE_CONTAINER_SECONDS,
  idleTailSeconds: number = IDLE_TAIL_SECONDS,
): { readonly seconds: number; readonly usd: number } {
  const seconds = attemptSeconds + BATCH_KILL_GRACE_SECONDS + preContainerSeconds + idleTailSeconds;
  return { seconds, usd: (seconds / 3600) * hourlyPrice(gpu.instance_type, 'on-demand') };
}

/**
 * What an attempt is charged for `seconds` of its instance (the span instanceClock.ts `chargedSpan`
 * measured: from what the instance had been charged up to, to the attempt's end and the idle tail),
 * at the whole instance's price for its capacity.
 * @example instanceCharge({ instance_type: 'g5.xlarge', capacity: 'on-demand' }, 3600).usd // 1.006
 */
export function instanceCharge(gpu: Priced, seconds: number): { readonly seconds: number; readonly usd: number } {
  const s = Math.max(0, seconds);
  return { seconds: s, usd: (s / 3600) * hourlyPrice(gpu.instance_type, gpu.capacity) };
}

/** The ledger reservation of one attempt of one job child: unique per execution, Batch job id (`<id>:<index>` for a child) and attempt. */
export function instanceReservationId(execution: string, jobId: string, attempt: string): string {
  return `gpu:${execution}:${jobId}:${attempt}`;
}
