/**
 * AWS Batch behind the synthesized state machine's `batch:submitJob.sync` states: the
 * hook takes the SubmitJob parameters exactly as the state machine rendered them, checks them
 * against the stack and SubmitJob's rules (its job definition, one of its queues, a valid job name,
 * only the container overrides the plan sets), and runs the job as Batch would (test/helpers/batchStandIn.ts: one child per array index,
 * retried while the job definition's retry strategy says so, at most its attempts). Each attempt
 * runs the real container code in-process (functions/gpu/fromEnv.ts, what entry.ts runs) with the
 * environment its container would have: the job definition's variables, the submission's
 * overrides, AWS Batch's own (array index, job id, attempt), and, standing in for the image's
 * `vllm`, test/helpers/fakeVllm.mjs on a free loopback port. A job that succeeds returns its
 * description as DescribeJobs gives it; one that fails throws States.TaskFailed with that
 * description as the cause, as the real integration does.
 *
 * Attempts run one at a time (each sets process.env for its duration, as its container's own);
 * `vllmEnv` adds variables to one attempt's environment (the fake server reads them: a crash
 * after so many answers, an exit at start).
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { runGpuJobFromEnv } from '../../../functions/gpu/fromEnv.js';
import { GPU_ENV } from '../../../lib/config/index.js';
import type { JobLog } from '../../../lib/gpu/probeJob.js';
import { StatesError } from '../asl/errors.js';
import type { Json, TaskCall } from '../asl/types.js';
import { jobOfSubmitJob, runBatchJob } from '../batchStandIn.js';
import type { ChildAttempt } from '../batchStandIn.js';
import { FAKE_VLLM, freePort } from '../gpu.js';
import type { EvaluateOnExit, SynthesizedGpuBatch } from './synthesizedPipeline.js';

/** One submission and what came of it. */
export interface GpuSubmission {
  readonly parameters: Json;
  readonly state: string;
  readonly jobId: string;
  status?: 'SUCCEEDED' | 'FAILED';
  attempts?: readonly ChildAttempt[];
}

/** Which attempt of which child of which job. */
export interface GpuAttempt {
  readonly jobName: string;
  readonly model: string;
  readonly index: number;
  readonly attempt: number;
}

const OVERRIDES = new Set(['ResourceRequirements', 'Environment']);

export class GpuBatchFleet {
  readonly submissions: GpuSubmission[] = [];
  /** The jobs' log lines (JSON, as the container writes them to CloudWatch). */
  readonly logs: string[] = [];
  /** When each attempt's container ran (epoch ms), in the order they ran. */
  readonly spans: (GpuAttempt & { readonly startedAtMs: number; readonly endedAtMs: number })[] = [];
  /** Extra variables for one attempt's environment (read by the fake vLLM), or none. */
  vllmEnv: ((a: GpuAttempt) => Record<string, string> | undefined) | undefined;
  private lock: Promise<unknown> = Promise.resolve();
  /**
   * The one instance every attempt runs on, one after another: booted this long before the fleet
   * was made (its boot and image pull), with the host folder the job definition mounts.
   */
  static readonly BOOT_SECONDS = 240;
  private readonly bootedAtMs = Date.now() - GpuBatchFleet.BOOT_SECONDS * 1000;

  constructor(
    private readonly gpu: SynthesizedGpuBatch,
    private readonly scratch: string,
  ) {}

  /** The `batchSubmitJobSync` integration. */
  integration(): (parameters: Json, call: TaskCall) => Promise<Json> {
    return (parameters, call) => this.submit(parameters, call);
  }

  private async submit(parameters: Json, call: TaskCall): Promise<Json> {
    const p = parameters as Record<string, unknown>;
    // SubmitJob's own validation: what the stack does not hold is a client error, not a job.
    if (p.JobDefinition !== this.gpu.jobDefinitionArn) throw new StatesError('Batch.ClientException', `JobDefinition ${String(p.JobDefinition)} is not the stack's (${this.gpu.jobDefinitionArn})`);
    if (!this.gpu.queues.includes(String(p.JobQueue))) throw new StatesError('Batch.ClientException', `JobQueue ${String(p.JobQueue)} is not one of the stack's`);
    if (typeof p.JobName !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(p.JobName)) throw new StatesError('Batch.ClientException', `JobName ${JSON.stringify(p.JobName)}: letters, digits, - and _, at most 128`);
    const overrides = (p.ContainerOverrides ?? {}) as { ResourceRequirements?: { Type: string; Value: unknown }[] };
    if (Object.keys(overrides).some((k) => !OVERRIDES.has(k))) throw new Error(`submitJob: unexpected container overrides ${Object.keys(overrides).join(', ')}`);
    for (const r of overrides.ResourceRequirements ?? []) {
      if (!['GPU', 'VCPU', 'MEMORY'].includes(r.Type) || typeof r.Value !== 'string') throw new StatesError('Batch.ClientException', `ResourceRequirements: ${JSON.stringify(r)}`);
    }
    const job = jobOfSubmitJob(p);
    const model = job.environment.find((e) => e.Name === GPU_ENV.model)?.Value ?? '';
    const submission: GpuSubmission = { parameters, state: call.state, jobId: randomUUID() };
    this.submissions.push(submission);
    const log = this.jobLog();
    const result = await runBatchJob(
      job,
      (env, index, attempt) => this.serial(() => this.runAttempt({ jobName: job.jobName, model, index, attempt }, env, log)),
      { jobId: submission.jobId, attempts: this.gpu.attempts, retried: retriedBy(this.gpu.evaluateOnExit) },
    );
    submission.status = result.status;
    submission.attempts = result.attempts;
    const children = job.children >= 2;
    // Each child's outcome is its last attempt's.
    const last = new Map(result.attempts.map((a) => [a.index, a.exitCode]));
    const failedChildren = [...last.values()].filter((code) => code !== 0).length;
    const described = {
      JobArn: `arn:aws:batch:us-east-1:123456789012:job/${submission.jobId}`,
      JobName: job.jobName,
      JobId: submission.jobId,
      JobQueue: job.jobQueue,
      JobDefinition: this.gpu.jobDefinitionArn,
      Status: result.status,
      ...(children
        ? {
            ArrayProperties: {
              Size: job.children,
              StatusSummary: { SUCCEEDED: job.children - failedChildren, FAILED: failedChildren },
            },
          }
        : {}),
      ...(result.status === 'FAILED'
        ? { StatusReason: children ? 'Array Child Job failed' : `Essential container in task exited (exit code ${result.attempts.at(-1)!.exitCode})` }
        : {}),
    };
    if (result.status === 'FAILED') throw new StatesError('States.TaskFailed', JSON.stringify(described));
    return described as Json;
  }

  /** One attempt of one child: its container's environment, the real entry code, its exit code. */
  private async runAttempt(a: GpuAttempt, batchEnv: NodeJS.ProcessEnv, log: JobLog): Promise<number> {
    const tmp = path.join(this.scratch, `gpu-${a.jobName}-${a.index}-${a.attempt}`);
    await mkdir(tmp, { recursive: true });
    const env: Record<string, string> = {
      ...this.gpu.environment,
      ...(batchEnv as Record<string, string>),
      // The image's vLLM, stood in for; the container's own /tmp.
      [GPU_ENV.vllmCommand]: FAKE_VLLM,
      [GPU_ENV.vllmPort]: String(await freePort()),
      TMPDIR: tmp,
      // No instance metadata here: the Spot notice is not watched (test/functions/gpuJob.test.ts does, on a stand-in).
      AWS_EC2_METADATA_DISABLED: 'true',
      // The instance's folder, where the job definition mounts it from the host: here, the fleet's.
      ...(this.gpu.environment[GPU_ENV.instanceDir] !== undefined ? { [GPU_ENV.instanceDir]: path.join(this.scratch, 'instance') } : {}),
      ...(this.vllmEnv?.(a) ?? {}),
    };
    const saved = new Map(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    const startedAtMs = Date.now();
    try {
      // The container starts now: its instance time is measured from here.
      return await runGpuJobFromEnv(log, startedAtMs, () => (Date.now() - this.bootedAtMs) / 1000);
    } finally {
      this.spans.push({ ...a, startedAtMs, endedAtMs: Date.now() });
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.lock.then(f, f);
    this.lock = run.catch(() => {});
    return run;
  }

  private jobLog(): JobLog {
    const line = (level: string) => (message: string, fields: Record<string, unknown> = {}) => void this.logs.push(JSON.stringify({ level, message, ...fields }));
    return { info: line('INFO'), warn: line('WARN'), error: line('ERROR') };
  }
}

/**
 * Whether AWS Batch retries an attempt whose container exited with a code, by a job definition's
 * EvaluateOnExit rules: the first rule all of whose conditions match decides (RETRY or EXIT), none
 * matching means retried. A pattern is exact, or a prefix when it ends with `*`. A container that
 * exits has no Reason, and the StatusReason "Essential container in task exited".
 */
export function retriedBy(rules: readonly EvaluateOnExit[]): (exitCode: number) => boolean {
  const glob = (pattern: string | undefined, value: string): boolean =>
    pattern === undefined || (pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : value === pattern);
  return (exitCode) => {
    const rule = rules.find((r) => glob(r.OnExitCode, String(exitCode)) && glob(r.OnReason, '') && glob(r.OnStatusReason, 'Essential container in task exited'));
    return rule === undefined || rule.Action === 'RETRY';
  };
}
