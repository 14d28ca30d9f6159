/**
 * The campaign's GPU jobs on AWS Batch, for `status --aws` and `stop --aws` (docs/gpu.md): listed per queue of the stack with ListJobs' JOB_NAME filter on each
 * execution's job-name prefix (lib/run/planWave.ts gpuJobNamePrefix), described for their array
 * children's states, and terminated. Loaded only by those commands, as lib/cli/aws.ts is.
 *
 * The endpoint is the SDK's own (AWS_ENDPOINT_URL_BATCH, or AWS_ENDPOINT_URL), as for the other clients.
 */
import { BatchClient, DescribeJobsCommand, ListJobsCommand, TerminateJobCommand } from '@aws-sdk/client-batch';
import type { JobStatus, JobSummary } from '@aws-sdk/client-batch';
import { gpuJobNamePrefix } from '../run/planWave.js';
import type { GpuJobState } from './gpuJobView.js';

/** States in which a job still holds (or waits for) an instance: what `stop` terminates. */
export const ACTIVE_JOB_STATES: readonly GpuJobState['status'][] = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING', 'RUNNING'];

/** DescribeJobs takes at most 100 ids. */
const DESCRIBE_BATCH = 100;

/**
 * The GPU jobs of the given executions in the given queues, newest first.
 * @example await campaignGpuJobs(new BatchClient({}), queues, ['demo-20261130T070500123Z'])
 */
export async function campaignGpuJobs(batch: BatchClient, queues: readonly string[], executions: readonly string[]): Promise<GpuJobState[]> {
  const found: { summary: JobSummary; queue: string; execution: string }[] = [];
  for (const queue of queues) {
    for (const execution of executions) {
      let nextToken: string | undefined;
      do {
        const page = await batch.send(
          new ListJobsCommand({ jobQueue: queue, filters: [{ name: 'JOB_NAME', values: [`${gpuJobNamePrefix(execution)}*`] }], ...(nextToken ? { nextToken } : {}) }),
        );
        for (const summary of page.jobSummaryList ?? []) {
          // The prefix filter could match a longer execution name's jobs: keep this execution's own.
          if (summary.jobId && summary.jobName?.startsWith(gpuJobNamePrefix(execution))) found.push({ summary, queue, execution });
        }
        nextToken = page.nextToken;
      } while (nextToken);
    }
  }
  const details = new Map<string, { size?: number; summary?: Partial<Record<JobStatus, number>> }>();
  const arrays = found.filter((f) => f.summary.arrayProperties?.size !== undefined).map((f) => f.summary.jobId!);
  for (let i = 0; i < arrays.length; i += DESCRIBE_BATCH) {
    const out = await batch.send(new DescribeJobsCommand({ jobs: arrays.slice(i, i + DESCRIBE_BATCH) }));
    for (const j of out.jobs ?? []) {
      if (j.jobId) details.set(j.jobId, { ...(j.arrayProperties?.size !== undefined ? { size: j.arrayProperties.size } : {}), summary: (j.arrayProperties?.statusSummary ?? {}) as Partial<Record<JobStatus, number>> });
    }
  }
  return found
    .map(({ summary: s, queue, execution }) => {
      const d = details.get(s.jobId!);
      return {
        jobId: s.jobId!,
        jobName: s.jobName ?? s.jobId!,
        jobQueue: queue,
        execution,
        status: s.status ?? 'SUBMITTED',
        ...(s.statusReason ? { statusReason: s.statusReason } : {}),
        ...(s.createdAt !== undefined ? { createdAt: new Date(s.createdAt) } : {}),
        ...(d?.size ?? s.arrayProperties?.size ? { arraySize: d?.size ?? s.arrayProperties!.size! } : {}),
        ...(d?.summary ? { children: d.summary } : {}),
      };
    })
    .sort((a, b) => (b.createdAt?.getTime() ?? 0) - (a.createdAt?.getTime() ?? 0));
}

/** Terminates the jobs still active (an array job with all its children); returns those it asked to stop. */
export async function terminateGpuJobs(batch: BatchClient, jobs: readonly GpuJobState[], reason: string): Promise<GpuJobState[]> {
  const active = jobs.filter((j) => ACTIVE_JOB_STATES.includes(j.status));
  for (const j of active) await batch.send(new TerminateJobCommand({ jobId: j.jobId, reason: reason.slice(0, 255) }));
  return active;
}

/** A Batch client from the SDK's usual chain (region, credentials, endpoint variables). */
export function batchClient(): BatchClient {
  return new BatchClient({});
}
