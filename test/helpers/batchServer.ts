/**
 * An AWS Batch server on 127.0.0.1 for the CLI's `status --aws` / `stop --aws` tests: the REST-JSON
 * protocol @aws-sdk/client-batch speaks (`POST /v1/<operation>`, JSON bodies, errors as
 * `x-amzn-errortype` + `{ message }`) for ListJobs (by queue, with the JOB_NAME filter and paging),
 * DescribeJobs and TerminateJob. Jobs never advance on their own: a test adds them in the state it
 * wants, as test/helpers/sfnServer.ts does for executions. Unknown operations answer 400.
 */
import { closeServer, createBodyServer, jsonBody, listenLocal, sendJson } from './localServer.js';

export type JobStatus = 'SUBMITTED' | 'PENDING' | 'RUNNABLE' | 'STARTING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';

export interface FakeJob {
  readonly jobId: string;
  readonly jobName: string;
  readonly jobQueue: string;
  status: JobStatus;
  statusReason?: string;
  /** Epoch milliseconds, as the service sends it. */
  readonly createdAt: number;
  /** Array jobs: children per status (DescribeJobs' arrayProperties.statusSummary). */
  readonly arraySize?: number;
  statusSummary?: Partial<Record<JobStatus, number>>;
}

export interface BatchServer {
  readonly url: string;
  readonly jobs: FakeJob[];
  readonly calls: Map<string, number>;
  /** Jobs per ListJobs page (small in tests, so paging is exercised). */
  pageSize: number;
  add(job: Omit<FakeJob, 'createdAt' | 'jobId'> & { jobId?: string }): FakeJob;
  close(): Promise<void>;
}

class ClientError extends Error {}

const ACTIVE: readonly JobStatus[] = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING', 'RUNNING'];

/** What ListJobs' summaries and DescribeJobs' details both say of a job. */
function jobFields(j: FakeJob): Record<string, unknown> {
  return {
    jobArn: `arn:aws:batch:us-east-1:123456789012:job/${j.jobId}`,
    jobId: j.jobId,
    jobName: j.jobName,
    createdAt: j.createdAt,
    status: j.status,
    ...(j.statusReason ? { statusReason: j.statusReason } : {}),
  };
}

export async function startBatchServer(): Promise<BatchServer> {
  const jobs: FakeJob[] = [];
  const calls = new Map<string, number>();
  const state = { pageSize: 100 };
  let clock = 1_790_000_000_000;
  const find = (id: unknown): FakeJob | undefined => jobs.find((j) => j.jobId === id);

  const operations: Record<string, (b: Record<string, unknown>) => unknown> = {
    listjobs(b) {
      if (typeof b.jobQueue !== 'string') throw new ClientError('jobQueue, arrayJobId or multiNodeJobId is required');
      const filters = (b.filters ?? []) as { name: string; values: string[] }[];
      const byName = filters.find((f) => f.name === 'JOB_NAME')?.values[0];
      const matches = (name: string) => (byName === undefined ? true : byName.endsWith('*') ? name.startsWith(byName.slice(0, -1)) : name === byName);
      // With filters every status is listed; without, only the one asked (RUNNING by default).
      const status = filters.length > 0 ? undefined : ((b.jobStatus as JobStatus | undefined) ?? 'RUNNING');
      const all = jobs.filter((j) => j.jobQueue === b.jobQueue && matches(j.jobName) && (status === undefined || j.status === status)).reverse();
      const start = typeof b.nextToken === 'string' ? Number(b.nextToken) : 0;
      const page = all.slice(start, start + state.pageSize);
      return {
        jobSummaryList: page.map((j) => ({ ...jobFields(j), ...(j.arraySize ? { arrayProperties: { size: j.arraySize } } : {}) })),
        ...(start + state.pageSize < all.length ? { nextToken: String(start + state.pageSize) } : {}),
      };
    },
    describejobs(b) {
      const ids = (b.jobs ?? []) as string[];
      return {
        jobs: ids.flatMap((id) => {
          const j = find(id);
          if (!j) return [];
          return [
            {
              ...jobFields(j),
              jobQueue: j.jobQueue,
              jobDefinition: 'arn:aws:batch:us-east-1:123456789012:job-definition/probe:3',
              ...(j.arraySize ? { arrayProperties: { size: j.arraySize, statusSummary: j.statusSummary ?? {} } } : {}),
            },
          ];
        }),
      };
    },
    terminatejob(b) {
      const j = find(b.jobId);
      if (!j) throw new ClientError(`Job ${String(b.jobId)} not found`);
      if (typeof b.reason !== 'string' || b.reason === '') throw new ClientError('reason is required');
      if (ACTIVE.includes(j.status)) {
        j.status = 'FAILED';
        j.statusReason = b.reason;
        if (j.arraySize) j.statusSummary = { FAILED: j.arraySize };
      }
      return {};
    },
  };

  const server = createBodyServer((req, res, body) => {
    const op = (req.url ?? '').replace(/^\/v1\//, '').split('?')[0]!;
    calls.set(op, (calls.get(op) ?? 0) + 1);
    const send = (status: number, payload: unknown, type?: string): void =>
      sendJson(res, status, payload, { 'content-type': 'application/json', ...(type ? { 'x-amzn-errortype': type } : {}) });
    try {
      const handler = req.method === 'POST' ? operations[op] : undefined;
      if (!handler) throw new ClientError(`operation ${req.method} ${req.url} is not served by this fake`);
      send(200, handler(jsonBody(body)));
    } catch (err) {
      if (err instanceof ClientError) send(400, { message: err.message }, 'ClientException');
      else send(500, { message: String(err) }, 'ServerException');
    }
  });
  const { url } = await listenLocal(server);
  // The handle is the state the handlers read: a test sets pageSize on it and the next request obeys.
  return Object.assign<typeof state, Omit<BatchServer, keyof typeof state>>(state, {
    url,
    jobs,
    calls,
    add(job) {
      const j: FakeJob = { ...job, jobId: job.jobId ?? `job-${jobs.length + 1}`, createdAt: (clock += 1000) };
      jobs.push(j);
      return j;
    },
    close: () => closeServer(server),
  });
}
