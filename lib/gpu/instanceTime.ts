/**
 * What a GPU job attempt costs on AWS, charged as instance time rather than per prompt: an upper
 * bound reserved before the attempt does anything, and the wall-clock time it measured settled
 * at its end (start-up, weights, model load and every prompt included). On AWS the per-prompt GPU
 * price (gpuPrice.ts) is then zero in the job, so nothing is counted twice; the plan and a local
 * run against a vLLM server still price per prompt.
 *
 * The bound is an attempt's whole life: AWS Batch stops an attempt at the job definition's
 * timeout (SIGTERM, then SIGKILL 30 s later), and before the container starts the instance boots
 * and pulls the image. The plan, before submitting, can only assume that time
 * (GPU_JOB.startupMinutes); the attempt itself measures it on the instance (instanceClock.ts) and
 * reserves and settles with what it measured. It is
 * priced at on-demand, which a Spot price never exceeds (a Spot request's default maximum); the
 * settlement is at the capacity's catalog price.
 */
import { GPU_JOB } from '../config/sizing.js';
import { gpuInstance, hourlyPrice } from './instances.js';
import type { GpuSettings } from './settings.js';

/** Seconds Batch lets a container run after the SIGTERM of a timeout, before SIGKILL. */
export const BATCH_KILL_GRACE_SECONDS = 30;

type Priced = Pick<GpuSettings, 'instance_type' | 'gpus' | 'capacity'>;

function share(gpu: Priced): number {
  const inst = gpuInstance(gpu.instance_type);
  return (gpu.gpus ?? inst.gpus) / inst.gpus;
}

/** Seconds of an attempt before its container starts (instance, image), as the plan assumes them; an attempt on AWS measures its own (instanceClock.ts). */
export const PRE_CONTAINER_SECONDS = GPU_JOB.startupMinutes * 60;

/**
 * The most one attempt can cost: `attemptSeconds` (the job definition's timeout) + Batch's kill
 * grace + the time before the container, at the on-demand price of the GPUs it uses.
 * @example instanceBound({ instance_type: 'g5.xlarge', capacity: 'spot' }, 4 * 3600).usd // (14400 + 30 + 600) s at $1.006/h
 */
export function instanceBound(gpu: Priced, attemptSeconds: number, preContainerSeconds: number = PRE_CONTAINER_SECONDS): { readonly seconds: number; readonly usd: number } {
  const seconds = attemptSeconds + BATCH_KILL_GRACE_SECONDS + preContainerSeconds;
  return { seconds, usd: (seconds / 3600) * hourlyPrice(gpu.instance_type, 'on-demand') * share(gpu) };
}

/**
 * What an attempt that ran `containerSeconds` (measured from its container's start to its end)
 * is charged: those seconds plus the time before the container (measured, or assumed), at the
 * capacity's price.
 * @example instanceCharge({ instance_type: 'g5.xlarge', capacity: 'on-demand' }, 3000).usd // (3000 + 600) s at $1.006/h
 */
export function instanceCharge(gpu: Priced, containerSeconds: number, preContainerSeconds: number = PRE_CONTAINER_SECONDS): { readonly seconds: number; readonly usd: number } {
  const seconds = Math.max(0, containerSeconds) + preContainerSeconds;
  return { seconds, usd: (seconds / 3600) * hourlyPrice(gpu.instance_type, gpu.capacity) * share(gpu) };
}

/** The ledger reservation of one attempt of one job child: unique per execution, Batch job id (`<id>:<index>` for a child) and attempt. */
export function instanceReservationId(execution: string, jobId: string, attempt: string): string {
  return `gpu:${execution}:${jobId}:${attempt}`;
}
