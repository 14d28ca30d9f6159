/**
 * What AWS Batch does with one of the plan's GPU jobs (`$.plan.wave.gpu.jobs[i]`) once the state
 * machine submits it with `batch:submitJob.sync`, for tests that drive a wave without AWS: one
 * child per group of shards (an array job from 2 children, a plain job for one), each child given the job's
 * environment plus AWS_BATCH_JOB_ARRAY_INDEX, AWS_BATCH_JOB_ID and AWS_BATCH_JOB_ATTEMPT, and run
 * again while its exit code is one the job definition retries and attempts are left
 * (infra/constructs/GpuBatch.ts: NOT_RETRIED_EXIT_CODES end it, GPU_JOB.attempts bound it). The job
 * SUCCEEDS when every child does, as `.sync` then returns; otherwise it FAILS, as `.sync` then throws.
 *
 * `runChild` runs one attempt of one child and returns its exit code: the tests pass
 * functions/gpu/job.ts runGpuJob. An ASL interpreter can answer `batch:submitJob.sync` with this.
 */
import type { GpuJob } from '../../lib/config/pipeline.js';
import { GPU_JOB } from '../../lib/config/sizing.js';
import { NOT_RETRIED_EXIT_CODES } from '../../lib/gpu/probeJob.js';

export interface ChildAttempt {
  readonly index: number;
  readonly attempt: number;
  readonly exitCode: number;
}

export interface StandInResult {
  readonly status: 'SUCCEEDED' | 'FAILED';
  /** Every attempt of every child, in the order run. */
  readonly attempts: readonly ChildAttempt[];
}

/**
 * Runs a GPU job's children one after the other (Batch runs them side by side; the ledger makes
 * the order irrelevant to what is stored).
 */
export async function runBatchJob(
  job: Pick<GpuJob, 'jobName' | 'children' | 'environment'>,
  runChild: (env: NodeJS.ProcessEnv, index: number, attempt: number) => Promise<number>,
  options: {
    readonly jobId?: string;
    readonly attempts?: number;
    /** Whether Batch retries an attempt that exited with this code (default: unless NOT_RETRIED_EXIT_CODES has it). */
    readonly retried?: (exitCode: number) => boolean;
  } = {},
): Promise<StandInResult> {
  const jobId = options.jobId ?? `job-${job.jobName}`;
  const maxAttempts = options.attempts ?? GPU_JOB.attempts;
  const retried = options.retried ?? ((code: number) => !(NOT_RETRIED_EXIT_CODES as readonly number[]).includes(code));
  const attempts: ChildAttempt[] = [];
  let failed = false;
  const array = job.children >= 2;
  for (let index = 0; index < job.children; index++) {
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const env: NodeJS.ProcessEnv = {
        ...Object.fromEntries(job.environment.map((e) => [e.Name, e.Value])),
        AWS_BATCH_JOB_ID: array ? `${jobId}:${index}` : jobId,
        AWS_BATCH_JOB_ATTEMPT: String(attempt),
        ...(array ? { AWS_BATCH_JOB_ARRAY_INDEX: String(index) } : {}),
      };
      const exitCode = await runChild(env, index, attempt);
      attempts.push({ index, attempt, exitCode });
      if (exitCode === 0) break;
      if (!retried(exitCode) || attempt === maxAttempts) {
        failed = true;
        break;
      }
    }
  }
  return { status: failed ? 'FAILED' : 'SUCCEEDED', attempts };
}

/**
 * The job a `batch:submitJob.sync` state asks for, from the Parameters the state machine resolved
 * (infra/constructs/Pipeline.ts: JobName, JobQueue, ArrayProperties.Size for an array job,
 * ContainerOverrides.Environment): what runBatchJob takes, for an ASL interpreter's Batch hook.
 */
export function jobOfSubmitJob(parameters: Record<string, unknown>): Pick<GpuJob, 'jobName' | 'children' | 'environment'> & { readonly jobQueue: string } {
  const p = parameters as { JobName?: unknown; JobQueue?: unknown; ArrayProperties?: { Size?: unknown }; ContainerOverrides?: { Environment?: unknown } };
  if (typeof p.JobName !== 'string' || typeof p.JobQueue !== 'string') throw new Error(`submitJob: JobName and JobQueue are required, got ${JSON.stringify(parameters)}`);
  const size = p.ArrayProperties?.Size;
  if (size !== undefined && !(Number.isInteger(size) && (size as number) >= 2 && (size as number) <= 10_000)) throw new Error(`submitJob: ArrayProperties.Size must be 2 to 10,000, got ${String(size)}`);
  const environment = (p.ContainerOverrides?.Environment ?? []) as GpuJob['environment'];
  return { jobName: p.JobName, jobQueue: p.JobQueue, children: (size as number | undefined) ?? 1, environment };
}
