/**
 * The GPU route executed through the synthesized state machine: the definition `cdk
 * synth` writes for a stack with GPU queues, run by the test ASL interpreter, its Lambda tasks
 * answered by the real handlers (as in pipelineRun.test.ts) and its `batch:submitJob.sync` states
 * by AWS Batch stood in for (test/helpers/pipeline/gpuBatchFleet.ts): each child of each job runs
 * the GPU container's own code (functions/gpu/fromEnv.ts, what entry.ts runs) with the environment
 * the job definition and the submission give it, against test/helpers/fakeVllm.mjs in vLLM's
 * place (first-token logprobs of the asked token ids). The campaign is the P(True) demo cut down,
 * with one simulated model on Lambda and one open-weight model `runs_on: gpu`. The same campaign
 * file runs locally (`runCampaign`, the open-weight model at base_url on the same fake vLLM): the
 * report's files must equal the local ones, every item of every phase answered exactly once, the
 * GPU jobs charged their measured instance time through the ledger, spend ≤ cap. A GPU job that fails (its
 * server dies mid-shard, then its retry cannot start vLLM) fails the execution through the
 * record-failure path; the rerun completes with nothing counted twice.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT, ENV, GPU_ENV, gpuQueueKey } from '../../lib/config/index.js';
import type { GpuJob } from '../../lib/config/pipeline.js';
import { EXIT_CODES } from '../../lib/gpu/probeJob.js';
import { instanceCharge } from '../../lib/gpu/instanceTime.js';
import { priceIn } from '../../lib/run/context.js';
import type { RunContext } from '../../lib/run/context.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import type { RunSummary } from '../../lib/run/runCampaign.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import type { ExecutionRecord } from '../helpers/asl/interpreter.js';
import { loadContext, tempDir } from '../helpers/campaigns.js';
import { readResults } from '../helpers/runData.js';
import { FAKE_VLLM, freePort } from '../helpers/gpu.js';
import { exampleCampaign } from '../helpers/pipeline/campaignFiles.js';
import { expectEveryItemOnce } from '../helpers/pipeline/expectEveryItemOnce.js';
import { startPipeline } from '../helpers/pipeline/pipelineHarness.js';
import type { Pipeline } from '../helpers/pipeline/pipelineHarness.js';
import { asRemote, withoutSpend } from '../helpers/localSource.js';
import { useServer } from '../helpers/useServer.js';

const CAMPAIGN = 'pipe-gpu';
const GPU_CONTEXT = { [CONTEXT.gpu]: 'true', [CONTEXT.gpuInstanceTypes]: 'g5.xlarge', [CONTEXT.gpuImage]: 'sha256:' + 'ab'.repeat(32) };
const WEIGHTS = 'weights/qwen3-8b/';

let root: string;
let cleanup: () => Promise<void>;
let vllm: ChildProcess | undefined;
let file: string;
let ctx: RunContext;
let local: RunSummary;
let localResults: Map<string, string>;

/** `vllm serve` stood in for on a free port, for the local run (the GPU jobs start their own). */
async function startLocalVllm(): Promise<number> {
  const port = await freePort();
  vllm = spawn(process.execPath, [FAKE_VLLM, 'serve', 'Qwen/Qwen3-8B', '--port', String(port), '--served-model-name', 'Qwen/Qwen3-8B'], { stdio: 'ignore' });
  for (let i = 0; i < 400; i++) {
    if (await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)) return port;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the fake vLLM did not start');
}

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('pipeline-gpu'));
  const port = await startLocalVllm();
  const dir = path.join(root, 'campaign');
  await mkdir(dir, { recursive: true });
  // The P(True) demo cut down: two languages, two verifier languages, a few items; alpha simulated
  // on Lambda, Qwen3-8B on a g5.xlarge (at base_url for `sondage run`; on AWS its job serves it).
  // generate at 0.002 prompts/s, about seven prompts a shard-hour: that wave's GPU job is an array of
  // several children; verify at 20 prompts/s: one shard-hour holds them all, a plain job.
  file = await exampleCampaign(dir, 'ptrue', CAMPAIGN, ['items.jsonl'], (doc) => {
    doc['budget_usd'] = 20;
    doc.design['languages'] = ['en', 'fr'];
    doc.design['verifier_languages'] = ['en', 'fr'];
    doc.design['item_limit'] = 1;
    (doc.design['analysis'] as Record<string, unknown>)['bootstrap_draws'] = 20;
    doc.models = [
      doc.models[0]!,
      {
        id: 'qwen',
        provider: 'openai-compatible',
        model: 'Qwen/Qwen3-8B',
        base_url: `http://127.0.0.1:${port}/v1`,
        runs_on: 'gpu',
        gpu: { instance_type: 'g5.xlarge', weights_prefix: WEIGHTS, prompts_per_second: { generate: 0.002, verify: 20 }, in_flight: 2, startup_timeout_s: 30 },
      },
    ];
  });
  ctx = await loadContext(file);
  local = await runCampaign(ctx, { dataDir: ctx.dataDir });
  expect(local.stopped).toBeUndefined();
  localResults = await readResults(ctx.dataDir, CAMPAIGN);
}, 60_000);

const pipelines = useServer('pipeline', startPipeline);
afterAll(async () => {
  vllm?.kill('SIGTERM');
  await cleanup();
});

/** A fresh GPU stack with the campaign and the model's weights uploaded. */
async function deploy(): Promise<Pipeline> {
  const pipeline = await pipelines.start({ context: GPU_CONTEXT });
  await pipeline.upload(file);
  for (const [name, body] of [
    ['config.json', '{"architectures": ["Qwen3ForCausalLM"]}'],
    ['model.safetensors', 'weights'],
  ] as const) {
    await pipeline.store.put(`${WEIGHTS}${name}`, body);
  }
  return pipeline;
}

interface Reply {
  readonly phase: string;
  readonly item_id: string;
  readonly model: string;
  readonly status: string;
  readonly cost_usd: number;
}

/** Every stored reply row (every attempt) of every phase the local run ran. */
async function storedReplies(pipeline: Pipeline): Promise<Reply[]> {
  const dir = await pipeline.localCopy(CAMPAIGN);
  const rows: Reply[] = [];
  for (const { phase } of local.phases) {
    rows.push(...(await readParquet<Reply>(tableGlob(dir, CAMPAIGN, phase, 'replies'), `SELECT '${phase}' AS phase, item_id, model, status, cost_usd FROM parts`)));
  }
  return rows;
}

/**
 * 0 lost, 0 counted twice: one ok reply per item of every phase, as many as the local run
 * answered; the ledger done, nothing pending or reserved; spend = the stored replies' cost + the GPU
 * attempts' settled instance time ≤ cap, the API answers' cost the local run's; the report's files the local ones.
 */
async function expectIntact(pipeline: Pipeline, runs: readonly ExecutionRecord[]): Promise<void> {
  const acc = await expectEveryItemOnce(pipeline, CAMPAIGN, local, runs, (summary) => summary.failed);
  // GPU time through the same ledger, as instance time: each attempt settled what it measured (its
  // log says how much), and the GPU model's replies cost nothing of their own.
  const settled = pipeline.gpu!.logs.map((l) => JSON.parse(l) as { message: string; usd?: number }).filter((l) => l.message === 'GPU instance time settled');
  expect(settled.length).toBe(submitted(pipeline).reduce((n, j) => n + j.attempts.length, 0));
  const gpuUsd = settled.reduce((sum, l) => sum + l.usd!, 0);
  expect(gpuUsd).toBeGreaterThan(0);
  expect(acc.budget.spent_usd).toBeCloseTo(acc.storedCostUsd + gpuUsd, 9);
  expect(acc.budget.spent_usd).toBeLessThanOrEqual(acc.budget.cap_usd);
  // (the judge's rows about qwen's replies carry qwen's id too; the judge answers them, on Lambda, at its token price)
  const answeredByQwen = (phase: string) => ctx.graph.phases.find((ph) => ph.name === phase)!.answeredBy === 'subject';
  const rows = await storedReplies(pipeline);
  const ok = rows.filter((r) => r.status === 'ok' && r.model === 'qwen' && answeredByQwen(r.phase));
  expect(new Set(ok.map((r) => r.phase))).toEqual(new Set(['generate', 'verify']));
  expect(ok.every((r) => r.cost_usd === 0)).toBe(true);
  // The API calls' answers cost what the local run paid for them (there the GPU prompts are priced per prompt instead).
  const qwen = ctx.campaign.models.find((m) => m.id === 'qwen')!;
  const api = (r: Reply) => r.status === 'ok' && !(r.model === 'qwen' && answeredByQwen(r.phase));
  const localRows: Reply[] = [];
  for (const { phase } of local.phases) {
    localRows.push(...(await readParquet<Reply>(tableGlob(ctx.dataDir, CAMPAIGN, phase, 'replies'), `SELECT '${phase}' AS phase, item_id, model, status, cost_usd FROM parts`)));
  }
  const sum = (list: Reply[]) => list.reduce((t, r) => t + Number(r.cost_usd), 0);
  expect(sum(rows.filter(api))).toBeCloseTo(sum(localRows.filter(api)), 12);
  // Locally each GPU prompt is priced at its share of GPU time at the stated throughput.
  for (const r of localRows.filter((x) => x.status === 'ok' && x.model === 'qwen' && answeredByQwen(x.phase))) {
    expect(Number(r.cost_usd)).toBeCloseTo(priceIn(ctx, ctx.graph.phases.find((ph) => ph.name === r.phase)!, qwen).per_request_usd!, 12);
  }
  const results = await pipeline.results(CAMPAIGN);
  const source = `s3://${pipeline.standIns.names.bucket}/campaigns/${CAMPAIGN}/`;
  expect([...results.keys()].sort()).toEqual([...localResults.keys()].sort());
  // The AWS report leaves the spend row out: the GPU jobs charge instance time, not replies.
  expect(localResults.get('report.html')).toMatch(/<dt>Spend<\/dt>/);
  expect(results.get('report.html')).not.toMatch(/<dt>Spend<\/dt>/);
  for (const [name, text] of results) expect(text === asRemote(withoutSpend(localResults.get(name)!), CAMPAIGN, source), `${name} differs from the local run's`).toBe(true);
}

/** The GPU jobs the plan asked for, as the state machine submitted them. */
function submitted(pipeline: Pipeline): { state: string; parameters: Record<string, unknown>; env: Record<string, string>; status?: string; attempts: readonly { index: number; attempt: number; exitCode: number }[] }[] {
  return pipeline.gpu!.submissions.map((s) => {
    const parameters = s.parameters as Record<string, unknown>;
    const env = Object.fromEntries(((parameters.ContainerOverrides as { Environment: GpuJob['environment'] }).Environment).map((e) => [e.Name, e.Value]));
    return { state: s.state, parameters, env, status: s.status, attempts: s.attempts ?? [] };
  });
}

describe('the GPU route through the synthesized state machine', () => {
  it('the campaign runs phases on both routes, and the GPU model answers generate and verify', () => {
    expect(local.phases.map((s) => s.phase)).toEqual(['generate', 'verify', 'judge']);
    expect(local.phases.every((s) => s.done > 0)).toBe(true);
  });

  it('runs each wave\'s GPU job beside its Lambda Map, one array child per group of shards, and the report writes the local run\'s files', async () => {
    const pipeline = await deploy();
    // act: the input `sondage start --aws` sends
    const run = await pipeline.execute({ campaign: CAMPAIGN });
    // assess: the waves ran through the Parallel; generate and verify each had one job for qwen
    expect(run.result).toMatchObject({ status: 'SUCCEEDED', output: { phasesRun: ['generate', 'verify', 'judge'] } });
    const jobs = submitted(pipeline);
    expect(jobs.map((j) => j.env[GPU_ENV.model])).toEqual(['qwen', 'qwen']);
    const queue = JSON.parse(pipeline.synthesized.functions.plan.environment[ENV.gpuQueues]!) as Record<string, string>;
    for (const j of jobs) {
      expect(j.parameters).toMatchObject({ JobDefinition: pipeline.synthesized.gpu!.jobDefinitionArn, JobQueue: queue[gpuQueueKey('g5.xlarge', 'spot')] });
      expect(j.env).toMatchObject({ [GPU_ENV.campaign]: CAMPAIGN, [GPU_ENV.execution]: run.name, [GPU_ENV.retryFailed]: 'false' });
      expect(j.status).toBe('SUCCEEDED');
    }
    // generate: an array job, every child run once to exit 0 (AWS_BATCH_JOB_ARRAY_INDEX picks its group)
    const [generate, verify] = jobs;
    expect(generate!.state).toBe('GpuArrayJob');
    const size = (generate!.parameters.ArrayProperties as { Size: number }).Size;
    expect(size).toBeGreaterThanOrEqual(2);
    expect(generate!.attempts).toEqual(Array.from({ length: size }, (_, index) => ({ index, attempt: 1, exitCode: EXIT_CODES.ok })));
    // verify: a plain job of one group (GPU_ENV.shardIndex names it), no ArrayProperties
    expect(verify!.state).toBe('GpuSingleJob');
    expect(verify!.parameters).not.toHaveProperty('ArrayProperties');
    expect(verify!.env[GPU_ENV.shardIndex]).toBe('0');
    expect(verify!.attempts).toEqual([{ index: 0, attempt: 1, exitCode: EXIT_CODES.ok }]);
    // The Lambda worker asked alpha, and the judge about qwen's replies; never qwen itself.
    const lambdaShards = pipeline.fleet.of('worker').flatMap((i) => (i.payload as { Items: { phase: string; model: string }[] }).Items);
    expect(new Set(lambdaShards.filter((s) => s.model === 'qwen').map((s) => s.phase))).toEqual(new Set(['judge']));
    expect(new Set(lambdaShards.filter((s) => s.model === 'alpha').map((s) => s.phase))).toEqual(new Set(['generate', 'verify', 'judge']));
    await expectIntact(pipeline, [run]);
  });

  it('a GPU job slower than its declared prompts/s is charged its measured instance time, not the per-prompt assumption; spend ≤ cap', async () => {
    const pipeline = await deploy();
    // arrange: the verify job's vLLM answers each call after 300 ms, two in flight: about 6.7
    // prompts/s where the campaign declares 20
    let generateJob: string | undefined;
    pipeline.gpu!.vllmEnv = (a) => {
      generateJob ??= a.jobName;
      return a.jobName === generateJob ? undefined : { FAKE_VLLM_LATENCY_MS: '300' };
    };
    // act
    const run = await pipeline.execute({ campaign: CAMPAIGN });
    // assess: the verify job ran as slowly as its server made it …
    expect(run.result).toMatchObject({ status: 'SUCCEEDED' });
    const verify = submitted(pipeline)[1]!;
    expect(verify.state).toBe('GpuSingleJob');
    const shards = JSON.parse(Buffer.from((await pipeline.store.get(verify.env[GPU_ENV.manifestKey]!))!).toString('utf8')) as { start: number; end: number }[][];
    const prompts = shards.flat().reduce((n, sh) => n + sh.end - sh.start, 0);
    expect(prompts).toBeGreaterThan(4);
    const span = pipeline.gpu!.spans.at(-1)!;
    expect(span.jobName).toBe(verify.parameters.JobName);
    const containerSeconds = (span.endedAtMs - span.startedAtMs) / 1000;
    expect(containerSeconds).toBeGreaterThanOrEqual((prompts * 0.3) / 2);
    // … and was charged at least that time on the whole instance, where per prompt it would have
    // been charged prompts / 20 s of it
    const settled = pipeline.gpu!.logs.map((l) => JSON.parse(l) as { message: string; usd?: number; seconds?: number }).filter((l) => l.message === 'GPU instance time settled');
    const last = settled.at(-1)!;
    const gpu = { instance_type: 'g5.xlarge', capacity: 'spot' as const };
    expect(last.seconds!).toBeGreaterThanOrEqual(Math.floor(containerSeconds));
    expect(last.usd!).toBeGreaterThanOrEqual(instanceCharge(gpu, containerSeconds).usd);
    expect(containerSeconds).toBeGreaterThan(2 * (prompts / 20));
    // The ledger counts it: spend is the API replies plus every settled GPU attempt, within the cap.
    await expectIntact(pipeline, [run]);
  });

  it('a GPU job that fails (its vLLM dies mid-shard, the retry cannot start it) fails the execution through record-failure; the rerun completes, nothing counted twice', async () => {
    const pipeline = await deploy();
    // arrange: in the first execution, child 1 of the generate wave's job loses its server after two
    // answers (exit 1: Batch retries it), then its retry's server dies at start (exit 4: not retried)
    let firstJob: string | undefined;
    pipeline.gpu!.vllmEnv = (a): Record<string, string> | undefined => {
      firstJob ??= a.jobName;
      if (a.jobName !== firstJob || a.index !== 1) return undefined;
      return a.attempt === 1 ? { FAKE_VLLM_DIE_AFTER: '2' } : { FAKE_VLLM_EXIT_CODE: '1' };
    };
    // act: `sondage start --aws`, then, the fault gone, `sondage start --aws --retry-failed`
    const failed = await pipeline.execute({ campaign: CAMPAIGN });
    const doneAfterFailure = await pipeline.ledger.counts(CAMPAIGN, 'generate');
    pipeline.gpu!.vllmEnv = undefined;
    const rerun = await pipeline.execute({ campaign: CAMPAIGN, retryFailed: true });

    // assess: the job failed as Batch reports it, the Parallel caught it, record-failure wrote it down
    expect(failed.result).toMatchObject({ status: 'FAILED', error: 'SondageFailed' });
    const top = failed.history.filter((e) => e.type === 'StateEntered' && !e.path.includes('/')).map((e) => e.state);
    expect(top.slice(-2)).toEqual(['Record failure', 'Failed']);
    const jobs = submitted(pipeline);
    expect(jobs[0]!.status).toBe('FAILED');
    expect(jobs[0]!.attempts.filter((a) => a.index === 1).map((a) => a.exitCode)).toEqual([EXIT_CODES.failed, EXIT_CODES.serverExited]);
    expect(jobs[0]!.attempts.filter((a) => a.index !== 1).every((a) => a.exitCode === EXIT_CODES.ok)).toBe(true);
    const failures = await pipeline.ledger.failures(CAMPAIGN);
    expect(failures.map((f) => f.execution)).toEqual([failed.arn]);
    expect(failures[0]!.error).toBe('States.TaskFailed');
    expect(JSON.parse(failures[0]!.cause)).toMatchObject({ JobName: jobs[0]!.parameters.JobName, Status: 'FAILED', StatusReason: 'Array Child Job failed' });
    // child 1 committed what it answered before its server died: fewer of its group's items were left
    // (the Lambda branch ran alpha's to the end) than the group holds; the rerun asked only those
    const manifest = JSON.parse(Buffer.from((await pipeline.store.get(jobs[0]!.env[GPU_ENV.manifestKey]!))!).toString('utf8')) as { start: number; end: number }[][];
    const child1 = manifest[1]!.reduce((n, s) => n + s.end - s.start, 0);
    const left = doneAfterFailure.pending + doneAfterFailure.failed;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(child1);
    const rerunJobs = jobs.filter((j) => j.env[GPU_ENV.execution] === rerun.name);
    expect(rerunJobs[0]!.env[GPU_ENV.retryFailed]).toBe('true');
    // the rerun's generate wave: alpha's were all answered, so no Lambda shard, and one plain GPU job
    // over what child 1 left (the plan lists only shards with items pending)
    const entered = rerun.history.filter((e) => e.type === 'StateEntered').map((e) => e.path);
    expect(entered.indexOf('Run the wave#0/No Lambda shards in this wave')).toBeGreaterThan(-1);
    expect(entered.indexOf('Run the wave#0/No Lambda shards in this wave')).toBeLessThan(entered.indexOf('Next wave'));
    expect(rerunJobs[0]!.state).toBe('GpuSingleJob');
    const leftover = JSON.parse(Buffer.from((await pipeline.store.get(rerunJobs[0]!.env[GPU_ENV.manifestKey]!))!).toString('utf8')) as { start: number; end: number }[][];
    const child1Shards = new Set(manifest[1]!.map((sh) => JSON.stringify(sh)));
    expect(leftover.flat().length).toBeGreaterThan(0);
    expect(leftover.flat().filter((sh) => !child1Shards.has(JSON.stringify(sh)))).toEqual([]);
    expect(rerunJobs.every((j) => j.status === 'SUCCEEDED')).toBe(true);
    await expectIntact(pipeline, [failed, rerun]);
  });
});
