/**
 * A GPU job of a campaign on AWS Batch as `status --aws` shows it (lib/cli/gpuJobs.ts lists them),
 * and its lines: apart from the Batch SDK, so the status command loads the SDK only on a stack
 * with GPU queues.
 */

/** A GPU job of the campaign on AWS Batch (lib/cli/gpuJobs.ts lists them), as status shows it. */
export interface GpuJobState {
  readonly jobId: string;
  readonly jobName: string;
  /** The queue's ARN: its name says the instance type and capacity. */
  readonly jobQueue: string;
  readonly execution: string;
  readonly status: 'SUBMITTED' | 'PENDING' | 'RUNNABLE' | 'STARTING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  readonly statusReason?: string;
  readonly createdAt?: Date;
  /** Array jobs: the number of children (shards) and how many are in each state. */
  readonly arraySize?: number;
  readonly children?: Partial<Record<GpuJobState['status'], number>>;
}

/** One line per GPU job: name, queue, state, and the children's states for an array job. */
export function formatGpuJobs(jobs: readonly GpuJobState[]): string[] {
  if (jobs.length === 0) return ['GPU jobs: none'];
  return [
    `GPU jobs: ${jobs.length}`,
    ...jobs.map((j) => {
      const states = Object.entries(j.children ?? {})
        .filter(([, n]) => (n ?? 0) > 0)
        .map(([state, n]) => `${String(n)} ${state}`);
      const children = j.arraySize ? `, ${j.arraySize} shards: ${states.join(', ') || 'none started'}` : '';
      return `  ${j.jobName} (${j.jobQueue.split('/').at(-1) ?? j.jobQueue}): ${j.status}${children}${j.statusReason ? ` (${j.statusReason.replace(/\s+/g, ' ').slice(0, 120)})` : ''}`;
    }),
  ];
}

