/**
 * A GPU phase along the state machine's path, at the handler level (the ASL interpreter of
 * test/helpers/asl/ will answer `batch:submitJob.sync` with test/helpers/batchStandIn.ts): the plan
 * handler routes a runs_on: gpu model's shards to a Batch job (manifest, array size, queue,
 * resources, environment); a stand-in for AWS Batch runs one GPU job child per shard through
 * functions/gpu's runGpuJob, a child failing once is retried and resumes without asking anything
 * twice; the judge phase runs on the Lambda worker beside it; and every reply is the one the Lambda
 * route stores for the same simulated model. Both routes run against S3 and DynamoDB speaking
 * servers on 127.0.0.1 (test/functions/harness.ts), one pair per route.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createPlan } from '../../functions/plan/handler.js';
import { createHandler as createWorker } from '../../functions/worker/handler.js';
import { parseGpuEnv, runGpuJob } from '../../functions/gpu/job.js';
import { redactKeys } from '../../functions/shared/secrets.js';
import { GPU_ENV, gpuQueueKey } from '../../lib/config/index.js';
import type { GpuJob, PlanOutput, Shard } from '../../lib/config/pipeline.js';
import { EXIT_CODES } from '../../lib/gpu/probeJob.js';
import type { JobLog } from '../../lib/gpu/probeJob.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import type { BlobStore } from '../../lib/store/types.js';
import { jobOfSubmitJob, runBatchJob } from '../helpers/batchStandIn.js';
import type { StandInResult } from '../helpers/batchStandIn.js';
import { tempDir } from '../helpers/campaigns.js';
import { SECRET_ARN, lambdaContext, startHarness, uploadCampaign, type Harness, readShards } from './harness.js';

const QUEUES = {
  [gpuQueueKey('g5.xlarge', 'spot')]: 'arn:aws:batch:us-east-1:123456789012:job-queue/g5-xlarge-spot',
  [gpuQueueKey('g5.xlarge', 'on-demand')]: 'arn:aws:batch:us-east-1:123456789012:job-queue/g5-xlarge-on-demand',
};
const CAMPAIGN = 'gpu-route';

let gpuSide: Harness;
let lambdaSide: Harness;
beforeAll(async () => {
  [gpuSide, lambdaSide] = await Promise.all([startHarness(), startHarness()]);
  for (const h of [gpuSide, lambdaSide]) h.secrets.secrets.set(SECRET_ARN, JSON.stringify({}));
  // The same campaign on both sides; alpha answers generate on a GPU on one side, on Lambda on the other.
  const edit = (gpu: boolean) => (doc: Parameters<Parameters<typeof uploadCampaign>[2] & object>[0]) => {
    doc.design['languages'] = ['en', 'de'];
    doc.design['forms'] = ['plain', 'negint'];
    doc.design['constraints'] = ['yesno', 'label'];
    // One story: 40 English and 34 German items, past a shard each; a second would double every
    // phase on both routes and prove nothing more.
    doc.design['story_limit'] = 1;
    doc.models = doc.models.slice(0, 1);
    doc.judge['sample_rate'] = 1;
    // Room for every GPU child's bound (a 4-hour attempt at on-demand): the plan submits no more children than the budget holds.
    (doc as Record<string, unknown>)['budget_usd'] = 100;
    if (gpu) {
      delete doc.models[0]!['price'];
      doc.models[0]!['runs_on'] = 'gpu';
      // 0.005 prompts/s: a shard of 18 items (an hour of work), so each language's items span shards.
      doc.models[0]!['gpu'] = { instance_type: 'g5.xlarge', prompts_per_second: 0.005 };
    }
  };
  await uploadCampaign(gpuSide.store, CAMPAIGN, edit(true));
  await uploadCampaign(lambdaSide.store, CAMPAIGN, edit(false));
});
afterAll(async () => {
  await Promise.all([gpuSide.close(), lambdaSide.close()]);
});

const silent: JobLog = { info: () => {}, warn: () => {}, error: () => {} };

/** A store that fails the first write of a replies part of `shard` index `failIndex` (an S3 outage mid-shard). */
function failingOnce(store: BlobStore, failing: { armed: boolean }): BlobStore {
  return new Proxy(store, {
    get: (t, prop) => {
      if (prop !== 'put') return Reflect.get(t, prop, t) as unknown;
      return async (key: string, body: Uint8Array | string) => {
        if (failing.armed && key.includes('/replies/')) {
          failing.armed = false;
          throw new Error('S3 outage: 503 SlowDown');
        }
        return t.put(key, body);
      };
    },
  });
}

interface Driven {
  readonly waves: PlanOutput[];
  readonly jobs: { readonly job: GpuJob; readonly result: StandInResult; readonly manifest: Shard[][] }[];
}

/**
 * One execution as the state machine runs it: plan a wave; run its Lambda shards (the worker
 * handler, ItemBatcher batches of four, again while it answers `again`) and its GPU jobs (the
 * Batch stand-in over runGpuJob); plan again with the phases run, until the plan is done.
 */
async function drive(h: Harness, execution: string, options: { readonly failChild?: number } = {}): Promise<Driven> {
  const plan = createPlan({ ...h.deps(), glueDatabase: 'db', gpuQueues: QUEUES });
  const worker = createWorker(h.deps());
  const waves: PlanOutput[] = [];
  const jobs: Driven['jobs'] = [];
  let phasesRun: readonly string[] = [];
  const failing = { armed: false };
  for (;;) {
    const out = await plan({ campaign: CAMPAIGN, execution, phasesRun }, lambdaContext());
    waves.push(out);
    if (out.done) return { waves, jobs };
    const lambdaShards = await readShards(h.store, out.wave.lambda.manifestKey);
    for (let i = 0; i < lambdaShards.length; i += 4) {
      let prev = await worker({ Items: lambdaShards.slice(i, i + 4), BatchInput: { campaign: CAMPAIGN, execution } }, lambdaContext());
      while (prev.again) prev = await worker({ Items: lambdaShards.slice(i, i + 4), BatchInput: { campaign: CAMPAIGN, execution }, result: prev }, lambdaContext());
    }
    for (const job of out.wave.gpu.jobs) {
      const deps = h.deps();
      const result = await runBatchJob(job, async (env, index, attempt) => {
        failing.armed = options.failChild === index && attempt === 1;
        return runGpuJob(parseGpuEnv(env), {
          ...deps,
          store: failingOnce(h.store, failing),
          redact: redactKeys,
          log: silent,
          downloadWeights: () => Promise.reject(new Error('a simulated model has no weights')),
        });
      });
      const manifest = JSON.parse(Buffer.from((await h.store.get(job.manifestKey))!).toString('utf8')) as Shard[][];
      jobs.push({ job, result, manifest });
      // submitJob.sync fails the state, the Parallel catches it: the execution fails here.
      if (result.status === 'FAILED') throw new Error(`GPU job ${job.jobName} failed: ${JSON.stringify(result.attempts)}`);
    }
    phasesRun = out.phasesRun;
  }
}

interface Row {
  readonly item_id: string;
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  readonly status: string;
  readonly text: string | null;
  readonly provider: string;
  readonly cost_usd: number;
}

/** Every reply row of the campaign in a bucket, read with DuckDB from a local copy. */
async function replies(h: Harness): Promise<Row[]> {
  const { dir } = await tempDir('gpu-route-read');
  for (const key of await h.store.list(`campaigns/${CAMPAIGN}/`)) {
    if (!key.endsWith('.parquet')) continue;
    await mkdir(path.dirname(path.join(dir, key)), { recursive: true });
    await writeFile(path.join(dir, key), (await h.store.get(key))!);
  }
  const rows: Row[] = [];
  for (const phase of ['generate', 'judge']) {
    rows.push(
      ...(await readParquet<Row>(
        tableGlob(dir, CAMPAIGN, phase, 'replies'),
        `SELECT item_id, '${phase}' AS phase, model, language, status, text, provider, cost_usd FROM parts ORDER BY item_id, attempt`,
      )),
    );
  }
  return rows;
}

describe('a GPU phase along the state machine path', () => {
  it('plans the GPU shards as one Batch job per model, runs them (a child failing once, retried) beside the Lambda judge, and stores the replies the Lambda route stores', async () => {
    // act: the GPU route, child 1 failing its first attempt; then the Lambda route
    const gpu = await drive(gpuSide, 'exec-gpu', { failChild: 1 });
    const lambda = await drive(lambdaSide, 'exec-lambda');

    // assess: the first wave has generate's shards on the GPU queue and none on Lambda
    const first = gpu.waves[0]!;
    expect(first.wave.phases).toEqual(['generate']);
    expect(first.wave.lambda.shardCount).toBe(0);
    expect(first.wave.gpu.jobs).toHaveLength(1);
    const { job, result, manifest } = gpu.jobs[0]!;
    const items = (group: readonly Shard[]) => group.reduce((n, s) => n + s.end - s.start, 0);
    expect(job).toMatchObject({
      model: 'alpha',
      instanceType: 'g5.xlarge',
      capacity: 'spot',
      jobQueue: QUEUES['g5.xlarge/spot'],
      manifestKey: `scratch/exec-gpu/wave-0-gpu-alpha.json`,
      resources: [
        { Type: 'GPU', Value: '1' },
        { Type: 'VCPU', Value: '4' },
        { Type: 'MEMORY', Value: '14848' },
      ],
    });
    expect(job.environment).toEqual(
      expect.arrayContaining([
        { Name: GPU_ENV.campaign, Value: CAMPAIGN },
        { Name: GPU_ENV.execution, Value: 'exec-gpu' },
        { Name: GPU_ENV.manifestKey, Value: job.manifestKey },
        { Name: GPU_ENV.model, Value: 'alpha' },
        { Name: GPU_ENV.retryFailed, Value: 'false' },
      ]),
    );
    expect(job.jobName).toMatch(/^exec-gpu-w0-alpha$/);
    // 18 items a shard (0.005 prompts/s for an hour), each language cut separately, the shards grouped
    // into children of at most 18 items (one model load each): the array's size is the manifest's length.
    expect(job.children).toBe(manifest.length);
    expect(job.children).toBeGreaterThanOrEqual(2);
    expect(job.shards).toBe(manifest.flat().length);
    expect(manifest.every((g) => items(g) <= 18 && g.every((s) => s.phase === 'generate' && s.model === 'alpha'))).toBe(true);
    expect(new Set(manifest.flat().map((s) => s.language))).toEqual(new Set(['en', 'de']));
    expect(first.wave.gpu.shardCount).toBe(job.shards);
    // assess: child 1 failed once (exit 1, a worker failure: retried) and succeeded on its second attempt; the others at once
    expect(result.status).toBe('SUCCEEDED');
    expect(result.attempts.filter((a) => a.index === 1).map((a) => a.exitCode)).toEqual([EXIT_CODES.failed, EXIT_CODES.ok]);
    expect(result.attempts.filter((a) => a.index !== 1).every((a) => a.exitCode === EXIT_CODES.ok && a.attempt === 1)).toBe(true);
    // assess: the judge wave ran on Lambda (the judge runs_on: lambda), and the plan then finished
    expect(gpu.waves[1]!.wave.phases).toEqual(['judge']);
    expect(gpu.waves[1]!.wave.gpu.jobs).toEqual([]);
    expect(gpu.waves[1]!.wave.lambda.shardCount).toBeGreaterThan(0);
    expect(gpu.waves.at(-1)!.done).toBe(true);

    // assess: every item answered once, nothing pending, nothing reserved
    const stored = await replies(gpuSide);
    const ok = stored.filter((r) => r.status === 'ok');
    expect(new Set(ok.map((r) => r.item_id)).size).toBe(ok.length);
    for (const phase of ['generate', 'judge']) {
      const counts = await gpuSide.ledger.counts(CAMPAIGN, phase);
      expect(counts.pending).toBe(0);
      expect(counts.failed).toBe(0);
    }
    expect((await gpuSide.ledger.budget(CAMPAIGN)).reserved_usd).toBeCloseTo(0, 12);

    // assess: the same replies as the Lambda route, item by item; only the price differs (GPU hours against a token price)
    const strip = (rows: Row[]) => rows.filter((r) => r.status === 'ok').map(({ cost_usd: _c, ...rest }) => rest);
    expect(strip(stored)).toEqual(strip(await replies(lambdaSide)));
    expect(lambda.jobs).toEqual([]);
    // On the GPU route a generate reply costs nothing itself: the job settles its measured instance
    // time per attempt (docs/budget.md), so a prompt's share is not counted a second time.
    const generateCost = ok.find((r) => r.phase === 'generate')!.cost_usd;
    expect(generateCost).toBe(0);
    expect((await gpuSide.ledger.budget(CAMPAIGN)).spent_usd).toBeGreaterThan(0);

    // What the state machine's submitJob.sync state sends for this job (its Parameters with the
    // paths resolved) is the job the stand-in runs: the hook an ASL interpreter plugs it into.
    const resolved = {
      JobName: job.jobName,
      JobQueue: job.jobQueue,
      JobDefinition: 'arn:aws:batch:us-east-1:123456789012:job-definition/probe:1',
      ArrayProperties: { Size: job.children },
      ContainerOverrides: { ResourceRequirements: job.resources, Environment: job.environment },
    };
    expect(jobOfSubmitJob(resolved)).toEqual({ jobName: job.jobName, jobQueue: job.jobQueue, children: job.children, environment: job.environment });
    expect(jobOfSubmitJob({ ...resolved, ArrayProperties: undefined }).children).toBe(1);
    expect(() => jobOfSubmitJob({ ...resolved, ArrayProperties: { Size: 1 } })).toThrow(/2 to 10,000/);
  });
});
