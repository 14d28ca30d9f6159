/**
 * The GPU job end to end with vLLM stood in for by test/helpers/fakeVllm.mjs, on S3-, DynamoDB- and
 * Secrets Manager-speaking servers on 127.0.0.1 (test/functions/harness.ts), for the P(True)
 * battery's generate and verify phases on an openai-compatible model that runs_on: gpu:
 * - the job downloads the weights from its prefix, starts `vllm serve` on them with the entry's
 *   settings, waits for /health, asks the verify phase's candidate token ids through the real
 *   openai-compatible provider, several calls in flight;
 * - the real entry point (functions/gpu/entry.ts, a child process) stopped by SIGTERM mid-shard
 *   commits what it has and exits to be retried; the retry asks only the rest, nothing twice;
 * - `sondage run` against a vLLM at the entry's base_url stores the same replies: the same probe
 *   code on a workstation.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { stringify } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as createPlan } from '../../functions/plan/handler.js';
import { parseGpuEnv, runGpuJob } from '../../functions/gpu/job.js';
import { downloadPrefix } from '../../functions/gpu/weights.js';
import { redactKeys } from '../../functions/shared/secrets.js';
import { GPU_ENV, gpuQueueKey } from '../../lib/config/index.js';
import type { GpuJob, PlanOutput } from '../../lib/config/pipeline.js';
import { EXIT_CODES } from '../../lib/gpu/probeJob.js';
import type { JobLog } from '../../lib/gpu/probeJob.js';
import { loadRunContext } from '../../lib/run/context.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import { runBatchJob } from '../helpers/batchStandIn.js';
import { REPO_ROOT, tempDir } from '../helpers/campaigns.js';
import { FAKE_VLLM, freePort } from '../helpers/gpu.js';
import { SECRET_ARN, lambdaContext, stackEnv, startHarness, type Harness } from './harness.js';

const QWEN_TRUE = [2514, 3007, 1866, 830, 20611];
const QUEUE = 'arn:aws:batch:us-east-1:123456789012:job-queue/g5-xlarge-spot';
const silent: JobLog = { info: () => {}, warn: () => {}, error: () => {} };

let h: Harness;
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  [h, { dir, cleanup }] = await Promise.all([startHarness(), tempDir('gpu-job')]);
  // The secret holds provider keys beside the Hugging Face token: vLLM must get only the latter.
  h.secrets.secrets.set(SECRET_ARN, JSON.stringify({ HF_TOKEN: 'hf_not_a_real_token', OPENAI_API_KEY: 'sk-not-a-real-key-000000', ANTHROPIC_API_KEY: 'sk-ant-not-a-real-key-0000' }));
  for (const [file, body] of [
    ['config.json', '{"architectures": ["Qwen3ForCausalLM"]}'],
    ['model.safetensors', 'weights'],
    ['tokenizer/tokenizer.json', '{}'],
  ] as const) {
    await h.store.put(`weights/qwen3-8b/${file}`, body);
  }
});
afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(async () => {
  await h.close();
  await cleanup();
});

/** A small P(True) campaign: 3 multiple-choice items, questions and replies in en and fr, verified in en. */
function campaignDoc(name: string, baseUrl: string | undefined, extra: Record<string, unknown> = {}) {
  return {
    name,
    seed: 7,
    budget_usd: 50,
    battery: 'ptrue',
    design: { items: 'items.jsonl', languages: ['en', 'fr'], verifier_languages: ['en'], benchmarks: ['mmmlu-demo'], item_limit: 3, analysis: { bootstrap_draws: 0 } },
    models: [
      {
        id: 'qwen',
        provider: 'openai-compatible',
        model: 'Qwen/Qwen3-8B',
        ...(baseUrl ? { base_url: baseUrl } : {}),
        runs_on: 'gpu',
        gpu: { instance_type: 'g5.xlarge', weights_prefix: 'weights/qwen3-8b/', prompts_per_second: 0.002, in_flight: 4, startup_timeout_s: 30, ...extra },
      },
    ],
  };
}

async function upload(name: string, doc: object): Promise<void> {
  const prefix = `campaigns/${name}/input/`;
  await h.store.put(`${prefix}campaign.yaml`, stringify(doc));
  await h.store.put(`${prefix}items.jsonl`, await readFile(path.join(REPO_ROOT, 'examples/ptrue/items.jsonl')));
}

async function planWave(name: string, execution: string, phasesRun: readonly string[] = []): Promise<PlanOutput> {
  const plan = createPlan({ ...h.deps(), glueDatabase: 'db', gpuQueues: { [gpuQueueKey('g5.xlarge', 'spot')]: QUEUE } });
  return plan({ campaign: name, execution, phasesRun }, lambdaContext());
}

/** Environment of one child, with the fake vLLM standing in for `vllm`. */
function childEnv(job: GpuJob, index: number, attempt: number, port: number, logFile: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(job.environment.map((e) => [e.Name, e.Value])),
    ...(job.children >= 2 ? { AWS_BATCH_JOB_ARRAY_INDEX: String(index) } : {}),
    AWS_BATCH_JOB_ID: `job-1${job.children >= 2 ? `:${index}` : ''}`,
    AWS_BATCH_JOB_ATTEMPT: String(attempt),
    [GPU_ENV.vllmCommand]: FAKE_VLLM,
    [GPU_ENV.vllmPort]: String(port),
    FAKE_VLLM_LOG: logFile,
    ...extra,
  };
}

function jobDeps() {
  const s3 = new S3Client({ endpoint: h.s3.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  return {
    ...h.deps(),
    redact: redactKeys,
    log: silent,
    downloadWeights: async (prefix: string, into: string) => void (await downloadPrefix(s3, 'data', prefix, into)),
  };
}

const lines = async (file: string) =>
  (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { argv?: string[]; hfToken?: boolean; apiKeys?: string[]; body?: Record<string, unknown>; stopped?: boolean; maxInFlight?: number });

/** The campaign's ok replies in a bucket, per phase, sorted: what the analysis reads. */
async function okReplies(name: string, phase: string): Promise<{ item_id: string; text: string; logprobs_json: string | null }[]> {
  const { dir: local } = await tempDir('gpu-job-read');
  for (const key of await h.store.list(`campaigns/${name}/${phase}/replies/`)) {
    await writeFile(path.join(local, path.basename(key)), (await h.store.get(key))!);
  }
  return readParquet(path.join(local, '*.parquet'), `SELECT item_id, text, logprobs_json FROM parts WHERE status = 'ok' ORDER BY item_id`);
}

describe('the GPU job with a vLLM stand-in', () => {
  it('downloads the weights, serves them with the entry settings, probes the verify phase with candidate ids, several calls in flight', async () => {
    const name = 'ptrue-gpu';
    // On AWS the entry needs no base_url: the job serves the model itself.
    await upload(name, campaignDoc(name, undefined));
    const port = await freePort();
    const logFile = path.join(dir, 'vllm-a.log');
    // In this process the server inherits process.env (the job's own environment in a container).
    vi.stubEnv('FAKE_VLLM_LOG', logFile);
    vi.stubEnv('FAKE_VLLM_LATENCY_MS', '20');
    const deps = jobDeps();
    const waves: PlanOutput[] = [await planWave(name, 'exec-a')];
    const runs = [];
    while (!waves.at(-1)!.done) {
      for (const job of waves.at(-1)!.wave.gpu.jobs) {
        runs.push(await runBatchJob(job, (env, index, attempt) => runGpuJob(parseGpuEnv(childEnv(job, index, attempt, port, logFile)), deps)));
      }
      waves.push(await planWave(name, 'exec-a', waves.at(-1)!.phasesRun));
    }

    expect(waves.slice(0, -1).map((w) => w.wave.phases)).toEqual([['generate'], ['verify']]);
    expect(runs.every((r) => r.status === 'SUCCEEDED' && r.attempts.every((a) => a.exitCode === EXIT_CODES.ok))).toBe(true);
    const events = await lines(logFile);
    const starts = events.filter((e) => e.argv);
    expect(starts.length).toBe(runs.reduce((n, r) => n + r.attempts.length, 0));
    const argv = starts[0]!.argv!;
    // vllm serve <the downloaded folder> --served-model-name <the campaign's model name> …
    expect(argv[0]).toMatch(/weights$/);
    expect(JSON.parse(await readFile(path.join(argv[0]!, 'config.json'), 'utf8'))).toEqual({ architectures: ['Qwen3ForCausalLM'] });
    expect(argv).toEqual(expect.arrayContaining(['--served-model-name', 'Qwen/Qwen3-8B', '--tensor-parallel-size', '1', '--generation-config', 'vllm', '--dtype', 'bfloat16', '--port', String(port)]));
    expect(starts.every((e) => e.hfToken === true)).toBe(true);
    // The job itself holds the provider keys; the model server it starts does not.
    expect(starts.map((e) => e.apiKeys)).toEqual(starts.map(() => []));
    const bodies = events.filter((e) => e.body).map((e) => e.body!);
    const verify = bodies.filter((b) => Array.isArray(b.logprob_token_ids));
    expect(verify.length).toBe((await okReplies(name, 'verify')).length);
    expect(verify[0]).toMatchObject({ max_tokens: 1, logprobs: true, return_tokens_as_token_ids: true });
    expect((verify[0]!.logprob_token_ids as number[]).slice(0, 5)).toEqual(QWEN_TRUE);
    const readings = await okReplies(name, 'verify');
    expect(readings.every((r) => r.logprobs_json !== null)).toBe(true);
    expect((await h.ledger.counts(name, 'verify')).pending).toBe(0);
    // Continuous batching wants requests in flight: the worker keeps up to gpu.in_flight (4 here) at once.
    const stopped = events.filter((e) => e.stopped);
    expect(stopped).toHaveLength(starts.length);
    expect(Math.max(...stopped.map((e) => e.maxInFlight ?? 0))).toBe(4);
  });

  it('the entry point stopped by SIGTERM mid-shard commits what it has and exits 75; the retry asks only the rest', async () => {
    const name = 'ptrue-sigterm';
    await upload(name, campaignDoc(name, undefined, { in_flight: 1 }));
    const out = await planWave(name, 'exec-s');
    const job = out.wave.gpu.jobs[0]!;
    const port = await freePort();
    const logFile = path.join(dir, 'vllm-s.log');
    const base = {
      ...process.env,
      ...childEnv(job, 0, 1, port, logFile, { FAKE_VLLM_LATENCY_MS: '150' }),
      ...stackEnv(h),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const start = (env: NodeJS.ProcessEnv) => {
      // The job's entry point as the image runs it (ENTRYPOINT: node --import tsx functions/gpu/entry.ts).
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'functions/gpu/entry.ts')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
      child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
      const code = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      return { child, code, output: () => output };
    };
    const total = (await h.ledger.counts(name, 'generate')).pending;
    const group = (JSON.parse(Buffer.from((await h.store.get(job.manifestKey))!).toString('utf8')) as { start: number; end: number }[][])[0]!;
    const childItems = group.reduce((n, s) => n + s.end - s.start, 0);
    expect(childItems).toBeGreaterThan(3);

    // act: SIGTERM once two answers are in
    const first = start(base);
    for (let i = 0; i < 400; i++) {
      const stats = await fetch(`http://127.0.0.1:${port}/stats`).then((r) => r.json() as Promise<{ completions: number }>, () => ({ completions: 0 }));
      if (stats.completions >= 2) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    first.child.kill('SIGTERM');
    const code = await first.code;

    // assess: interrupted (retried by Batch), what was answered committed, the rest pending
    expect(code, first.output()).toBe(EXIT_CODES.interrupted);
    const afterFirst = await h.ledger.counts(name, 'generate');
    expect(afterFirst.done).toBeGreaterThanOrEqual(2);
    expect(afterFirst.done).toBeLessThan(childItems);
    expect((await okReplies(name, 'generate')).length).toBe(afterFirst.done);
    expect(first.output()).toContain('SIGTERM: stopping the worker');
    expect(await fetch(`http://127.0.0.1:${port}/health`).then(() => 'up', () => 'down')).toBe('down');

    // act: Batch's retry of the child (attempt 2), in this process this time
    expect(await runGpuJob(parseGpuEnv(childEnv(job, 0, 2, port, logFile)), jobDeps())).toBe(EXIT_CODES.ok);

    // assess: the child's shards done, every item answered once; the other child's are still pending (not run here)
    const replies = await okReplies(name, 'generate');
    expect(new Set(replies.map((r) => r.item_id)).size).toBe(replies.length);
    expect(replies.length).toBe(childItems);
    expect((await h.ledger.counts(name, 'generate')).pending).toBe(total - replies.length);
    expect((await h.ledger.budget(name)).reserved_usd).toBeCloseTo(0, 12);
  });

  it('`sondage run` on a vLLM at base_url stores the replies the GPU job stores: the same probe code on a workstation', async () => {
    const port = await freePort();
    const server = spawn(process.execPath, [FAKE_VLLM, 'serve', 'Qwen/Qwen3-8B', '--port', String(port), '--served-model-name', 'Qwen/Qwen3-8B'], { stdio: 'ignore' });
    try {
      for (let i = 0; i < 200 && !(await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 25));
      const file = path.join(dir, 'local', 'campaign.yaml');
      const { mkdir } = await import('node:fs/promises');
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, stringify({ ...campaignDoc('ptrue-gpu', `http://127.0.0.1:${port}/v1`), data_dir: 'data' }));
      await writeFile(path.join(path.dirname(file), 'items.jsonl'), await readFile(path.join(REPO_ROOT, 'examples/ptrue/items.jsonl')));

      const ctx = await loadRunContext(file);
      await runCampaign(ctx, { skipAnalysis: true });

      for (const phase of ['generate', 'verify']) {
        const local = await readParquet<{ item_id: string; text: string; logprobs_json: string | null }>(
          tableGlob(ctx.dataDir, 'ptrue-gpu', phase, 'replies'),
          `SELECT item_id, text, logprobs_json FROM parts WHERE status = 'ok' ORDER BY item_id`,
        );
        expect(local.length).toBeGreaterThan(0);
        expect(local).toEqual(await okReplies('ptrue-gpu', phase));
      }
    } finally {
      server.kill('SIGTERM');
    }
  });
});
