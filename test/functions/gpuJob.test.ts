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
import { EventEmitter } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { stringify } from 'yaml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler as createPlan } from '../../functions/plan/handler.js';
import { parseGpuEnv, runGpuJob } from '../../functions/gpu/job.js';
import type { GpuJobDeps, GpuSpend } from '../../functions/gpu/job.js';
import { downloadPrefix } from '../../functions/gpu/weights.js';
import { redactKeys } from '../../functions/shared/secrets.js';
import { GPU_ENV, gpuQueueKey } from '../../lib/config/index.js';
import type { GpuJob, PlanOutput } from '../../lib/config/pipeline.js';
import { GPU_JOB } from '../../lib/config/sizing.js';
import { CHARGED_UNTIL_FILE } from '../../lib/gpu/instanceClock.js';
import { GPU_CATALOG, gpuInstance } from '../../lib/gpu/instances.js';
import { IDLE_TAIL_SECONDS, PRE_CONTAINER_SECONDS, instanceBound, instanceCharge } from '../../lib/gpu/instanceTime.js';
import { EXIT_CODES } from '../../lib/gpu/probeJob.js';
import type { ExitCode, JobLog } from '../../lib/gpu/probeJob.js';
import { loadRunContext, priceIn } from '../../lib/run/context.js';
import { downloadCampaign } from '../../lib/run/campaignInput.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import { runBatchJob } from '../helpers/batchStandIn.js';
import { REPO_ROOT, tempDir } from '../helpers/campaigns.js';
import { startFakeImds } from '../helpers/fakeImds.js';
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
beforeEach(() => {
  // No instance metadata service here, unless a test gives its stand-in.
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
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

async function planWave(name: string, execution: string, phasesRun: readonly string[] = [], instanceType = 'g5.xlarge'): Promise<PlanOutput> {
  const plan = createPlan({ ...h.deps(), glueDatabase: 'db', gpuQueues: { [gpuQueueKey(instanceType, 'spot')]: QUEUE } });
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

/**
 * Runs the first child of `job` as attempt `attempt`, its fake vLLM on a free port writing to
 * `logFile`, with jobDeps() overlaid by `deps`.
 */
async function runChild(job: GpuJob, attempt: number, logFile: string, deps: Partial<GpuJobDeps> = {}): Promise<ExitCode> {
  return runGpuJob(parseGpuEnv(childEnv(job, 0, attempt, await freePort(), logFile)), { ...jobDeps(), ...deps });
}

/**
 * Watches a GPU job's budget: `held` gets what the budget reserved at the moment vLLM is started
 * (the attempt's bound must already be held then), `spends` what the job published. Pass `log`
 * and `publishSpend` to runGpuJob.
 */
function budgetWatch(campaign: string) {
  const held: Promise<number>[] = [];
  const spends: GpuSpend[] = [];
  const log: JobLog = { ...silent, info: (m) => void (m === 'vLLM server starting' && held.push(h.ledger.budget(campaign).then((b) => b.reserved_usd))) };
  return { held, spends, log, publishSpend: async (sp: GpuSpend) => void spends.push(sp) };
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

/** The uploaded campaign as the job loads it, with its generate phase and GPU entry. */
async function loadJobContext(name: string) {
  const { dir: local } = await tempDir('gpu-job-ctx');
  const ctx = await downloadCampaign(h.store, name, local);
  return { ctx, phase: ctx.graph.get('generate'), entry: ctx.campaign.models.find((m) => m.id === 'qwen')! };
}

/** cost_usd of every stored generate reply of a campaign. */
async function readReplyCosts(name: string): Promise<number[]> {
  const { dir: local } = await tempDir('gpu-job-cost');
  for (const key of await h.store.list(`campaigns/${name}/generate/replies/`)) await writeFile(path.join(local, path.basename(key)), (await h.store.get(key))!);
  return (await readParquet<{ cost_usd: number }>(path.join(local, '*.parquet'), 'SELECT cost_usd FROM parts')).map((r) => Number(r.cost_usd));
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
    vi.stubEnv('FAKE_VLLM_LATENCY_MS', '50');
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
    // Continuous batching wants requests in flight: the worker keeps several, never more than gpu.in_flight (4 here).
    const stopped = events.filter((e) => e.stopped);
    expect(stopped).toHaveLength(starts.length);
    const most = Math.max(...stopped.map((e) => e.maxInFlight ?? 0));
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
  }, 180_000);

  /** The job's entry point as a child process, as the image runs it. */
  const startEntry = (env: NodeJS.ProcessEnv) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'functions/gpu/entry.ts')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    const code = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    return { child, code, output: () => output };
  };
  /** Until the fake vLLM holds a request: the job is mid-shard, past its handlers' set-up, whatever the machine's load. */
  const untilHeld = async (port: number): Promise<void> => {
    for (;;) {
      const stats = await fetch(`http://127.0.0.1:${port}/stats`).then((r) => r.json() as Promise<{ held: number }>, () => ({ held: 0 }));
      if (stats.held >= 1) return;
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  /**
   * A temporary folder of the child's own (TMPDIR): the job's scratch is <tmp>/sondage-gpu/<execution>-<index>-<attempt>,
   * the same at every run of this file, and a killed child leaves its journals there. In the shared /tmp,
   * the next run's child adopted them as its own replies (another run's campaign of the same name).
   */
  const childTmp = async (label: string): Promise<string> => {
    const tmp = path.join(dir, `tmp-${label}`);
    await mkdir(tmp, { recursive: true });
    return tmp;
  };
  const groupItems = async (job: GpuJob, index: number) =>
    (JSON.parse(Buffer.from((await h.store.get(job.manifestKey))!).toString('utf8')) as { start: number; end: number }[][])[index]!.reduce((n, s) => n + s.end - s.start, 0);

  it('the entry point stopped by SIGTERM mid-shard commits what it has and exits 75; the retry asks only the rest', async () => {
    const name = 'ptrue-sigterm';
    await upload(name, campaignDoc(name, undefined, { in_flight: 1 }));
    const out = await planWave(name, 'exec-s');
    const job = out.wave.gpu.jobs[0]!;
    const port = await freePort();
    const logFile = path.join(dir, 'vllm-s.log');
    // Two answers, then every call held: SIGTERM surely finds one in flight.
    const env = { ...process.env, ...childEnv(job, 0, 1, port, logFile, { FAKE_VLLM_HOLD_AFTER: '2' }), ...stackEnv(h), AWS_EC2_METADATA_DISABLED: 'true', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', TMPDIR: await childTmp('s') };
    const total = (await h.ledger.counts(name, 'generate')).pending;
    const childItems = await groupItems(job, 0);
    expect(childItems).toBeGreaterThan(3);

    // act: SIGTERM while the third call is in flight
    const first = startEntry(env);
    await untilHeld(port);
    first.child.kill('SIGTERM');
    const code = await first.code;

    // assess: interrupted (retried by Batch), the two answers committed, the rest pending
    expect(code, first.output()).toBe(EXIT_CODES.interrupted);
    expect((await h.ledger.counts(name, 'generate')).done).toBe(2);
    expect((await okReplies(name, 'generate')).length).toBe(2);
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
  }, 180_000);

  it('on Spot, the two-minute interruption notice (instance metadata, IMDSv2) stops the job as SIGTERM does: what was answered is committed, exit 75', async () => {
    const name = 'ptrue-spot';
    await upload(name, campaignDoc(name, undefined, { in_flight: 1 }));
    const job = (await planWave(name, 'exec-n')).wave.gpu.jobs[0]!;
    const port = await freePort();
    const imds = await startFakeImds();
    const warnings: string[] = [];
    const log: JobLog = { ...silent, warn: (m) => void warnings.push(m) };
    try {
      vi.stubEnv('FAKE_VLLM_HOLD_AFTER', '2');
      const running = runGpuJob(parseGpuEnv(childEnv(job, 0, 1, port, path.join(dir, 'vllm-n.log'))), { ...jobDeps(), log, metadataEndpoint: imds.url });
      await untilHeld(port);
      // The watch has been reading the item (404: no notice) with its token.
      expect(imds.reads.length).toBeGreaterThan(0);
      imds.notify();
      expect(await running).toBe(EXIT_CODES.interrupted);
      expect(warnings.some((w) => w.startsWith('Spot interruption notice (terminate at '))).toBe(true);
      expect(imds.reads.every((r) => r.withToken)).toBe(true);
      expect((await h.ledger.counts(name, 'generate')).done).toBe(2);
      expect((await h.ledger.budget(name)).reserved_usd).toBeCloseTo(0, 12);
    } finally {
      await imds.close();
    }
  });

  it('parts are committed on the gpu.commit_minutes timer: a job killed outright (SIGKILL) keeps what it answered before, and the retry asks only the rest', async () => {
    const name = 'ptrue-kill';
    // A timer of 6 ms: every reply is committed as its chunk (one call: in_flight 1) ends.
    await upload(name, campaignDoc(name, undefined, { in_flight: 1, commit_minutes: 0.0001 }));
    const job = (await planWave(name, 'exec-k')).wave.gpu.jobs[0]!;
    const port = await freePort();
    const logFile = path.join(dir, 'vllm-k.log');
    // Its own /tmp: a killed child's journals outlive it, and must not meet the next run's child.
    const env = { ...process.env, ...childEnv(job, 0, 1, port, logFile, { FAKE_VLLM_HOLD_AFTER: '2' }), ...stackEnv(h), AWS_EC2_METADATA_DISABLED: 'true', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', TMPDIR: await childTmp('k') };
    const childItems = await groupItems(job, 0);
    const first = startEntry(env);
    try {
      await untilHeld(port);
      // The two answers' parts are committed (no signal asked for them): uploaded, and recorded by the ledger's transaction.
      const committed = async () => {
        const parts = await h.store.list(`campaigns/${name}/generate/replies/`);
        const recorded = await h.ledger.committedParts(name, 'generate');
        return parts.length > 0 && parts.every((k) => recorded.has(k)) && (await okReplies(name, 'generate')).length === 2;
      };
      // No bound but the test's own timeout: under load a commit may take seconds, and the kill must come after it.
      while (!(await committed())) await new Promise((r) => setTimeout(r, 25));
      first.child.kill('SIGKILL');
      await first.code;
    } finally {
      // The killed job's server is orphaned, as on a lost instance: stop it (its pid is in its log).
      for (const e of await lines(logFile)) {
        const pid = (e as { pid?: number }).pid;
        if (e.argv && pid) {
          try {
            process.kill(pid, 'SIGTERM');
          } catch {
            // already gone
          }
        }
      }
    }
    expect((await h.ledger.counts(name, 'generate')).done).toBe(2);
    expect((await okReplies(name, 'generate')).length).toBe(2);

    expect(await runChild(job, 2, logFile)).toBe(EXIT_CODES.ok);
    const replies = await okReplies(name, 'generate');
    expect(new Set(replies.map((r) => r.item_id)).size).toBe(replies.length);
    expect(replies.length).toBe(childItems);
  }, 180_000);

  it('the same attempt started again on a host that kept its scratch adds its parts beside the first process\'s: every item answered once, no committed reply overwritten', async () => {
    const name = 'ptrue-again';
    await upload(name, campaignDoc(name, undefined, { in_flight: 1, commit_minutes: 0.0001 }));
    const job = (await planWave(name, 'exec-again')).wave.gpu.jobs[0]!;
    const childItems = await groupItems(job, 0);
    const signals = new EventEmitter();
    // The first process answers two, then is stopped (SIGTERM) with a call held: it commits what it has.
    vi.stubEnv('FAKE_VLLM_HOLD_AFTER', '2');
    const port = await freePort();
    const running = runGpuJob(parseGpuEnv(childEnv(job, 0, 1, port, path.join(dir, 'vllm-again.log'))), { ...jobDeps(), signals });
    await untilHeld(port);
    signals.emit('SIGTERM');
    expect(await running).toBe(EXIT_CODES.interrupted);
    const first = await okReplies(name, 'generate');
    expect(first.length).toBe(2);

    // act: the same attempt (1) again, in the same scratch, as a hand-run image or a reused host would
    vi.stubEnv('FAKE_VLLM_HOLD_AFTER', '');
    expect(await runChild(job, 1, path.join(dir, 'vllm-again.log'))).toBe(EXIT_CODES.ok);

    // assess: the first process's replies are still there, every item of the child answered once
    const replies = await okReplies(name, 'generate');
    expect(replies).toEqual(expect.arrayContaining(first));
    expect(new Set(replies.map((r) => r.item_id)).size).toBe(replies.length);
    expect(replies.length).toBe(childItems);
    expect((await h.ledger.counts(name, 'generate')).done).toBe(childItems);
  }, 180_000);

  it('a GPU job slower than assumed is charged its measured instance time: the bound held before vLLM starts, settled at the end, spend ≤ cap', async () => {
    const name = 'ptrue-slow';
    // Priced at 1,000 prompts/s, answered at about 3/s: per prompt, the budget would see almost nothing.
    await upload(name, campaignDoc(name, undefined, { prompts_per_second: 1000, in_flight: 1 }));
    const job = (await planWave(name, 'exec-slow')).wave.gpu.jobs[0]!;
    const gpu = { instance_type: 'g5.xlarge', capacity: 'spot' as const };
    const bound = instanceBound(gpu, GPU_JOB.attemptTimeoutSeconds).usd;
    vi.stubEnv('FAKE_VLLM_LATENCY_MS', '300');
    // The moment vLLM is started, what the budget holds.
    const { held, spends, log, publishSpend } = budgetWatch(name);

    const before = Date.now();
    const code = await runChild(job, 1, path.join(dir, 'vllm-slow.log'), { log, startedAtMs: before, publishSpend });
    const elapsed = (Date.now() - before) / 1000;

    expect(code).toBe(EXIT_CODES.ok);
    expect(await Promise.all(held)).toEqual([expect.closeTo(bound, 9)]);
    const budget = await h.ledger.budget(name);
    expect(budget.reserved_usd).toBeCloseTo(0, 12);
    // Settled at the measured time (with the assumed minutes before the container and Batch's idle tail after it), not per prompt.
    expect(spends).toHaveLength(1);
    const measured = spends[0]!.seconds - PRE_CONTAINER_SECONDS - IDLE_TAIL_SECONDS;
    expect(measured).toBeGreaterThan(0.3 * (await h.ledger.counts(name, 'generate')).done);
    expect(measured).toBeLessThanOrEqual(elapsed);
    expect(budget.spent_usd).toBeCloseTo(spends[0]!.usd, 12);
    expect(spends[0]!.usd).toBeCloseTo(instanceCharge(gpu, spends[0]!.seconds).usd, 12);
    const perPrompt = priceIn((await loadJobContext(name)).ctx, (await loadJobContext(name)).phase, (await loadJobContext(name)).entry).per_request_usd!;
    expect(budget.spent_usd).toBeGreaterThan(100 * perPrompt * (await h.ledger.counts(name, 'generate')).done);
    expect(budget.spent_usd).toBeLessThanOrEqual(budget.cap_usd);
    // The replies themselves cost nothing on AWS: the instance time is their price.
    const rows = await readReplyCosts(name);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((c) => c === 0)).toBe(true);
  });

  it('the instance time is measured on the instance: a fresh one is charged its boot, each job Batch\'s idle tail after it, the next job placed within that tail only its own time', async () => {
    const name = 'ptrue-instance';
    await upload(name, campaignDoc(name, undefined, { in_flight: 4 }));
    const job = (await planWave(name, 'exec-i')).wave.gpu.jobs[0]!;
    const gpu = { instance_type: 'g5.xlarge', capacity: 'spot' as const };
    const { dir: instanceDir } = await tempDir('gpu-instance');
    // An instance that booted and pulled the image for 30 minutes: more than the 10 the plan assumes.
    const bootedAt = Date.now() - 1800_000;
    const clock = { uptimeSeconds: () => (Date.now() - bootedAt) / 1000, dir: instanceDir };
    const { held, spends, log, publishSpend } = budgetWatch(name);

    const froms: unknown[] = [];
    const clockLog: JobLog = { ...log, info: (m, f) => void (m === 'GPU instance time before the container' ? froms.push(f?.['from']) : log.info(m, f)) };
    const first = Date.now();
    expect(await runChild(job, 1, path.join(dir, 'vllm-i1.log'), { log: clockLog, startedAtMs: first, instanceClock: clock, publishSpend })).toBe(EXIT_CODES.ok);
    const firstEnd = Date.now();
    // The next job's container starts on the same instance once the first has ended.
    const second = Date.now();
    expect(await runChild(job, 2, path.join(dir, 'vllm-i2.log'), { log: clockLog, startedAtMs: second, instanceClock: clock, publishSpend })).toBe(EXIT_CODES.ok);
    const secondEnd = Date.now();

    expect(spends).toHaveLength(2);
    expect(froms).toEqual(['boot', 'last-job']);
    // The first: its 30 minutes before the container, measured, and the bound it held counted them.
    const firstPre = (first - bootedAt) / 1000;
    // The first: its 30 minutes before the container, measured, and the idle tail after it; the bound it held counted both.
    expect(spends[0]!.seconds).toBeGreaterThanOrEqual(firstPre + IDLE_TAIL_SECONDS);
    expect(spends[0]!.seconds).toBeLessThanOrEqual(firstPre + (firstEnd - first) / 1000 + IDLE_TAIL_SECONDS + 1);
    const firstHeld = (await Promise.all(held))[0]!;
    expect(firstHeld).toBeCloseTo(instanceBound(gpu, GPU_JOB.attemptTimeoutSeconds, firstPre).usd, 4);
    expect(firstHeld).toBeGreaterThan(instanceBound(gpu, GPU_JOB.attemptTimeoutSeconds, firstPre, 0).usd);
    // The second started within the first's idle tail: charged from where the first's charge ended, not the boot again, nor the plan's 10 minutes.
    expect(spends[1]!.seconds).toBeLessThanOrEqual((secondEnd - firstEnd) / 1000 + 1);
    expect(spends[1]!.usd).toBeLessThan(instanceCharge(gpu, PRE_CONTAINER_SECONDS).usd);
    // Together: the instance from its boot to the second's end and its idle tail, each second once; the mark says so for a third.
    const life = (secondEnd - bootedAt) / 1000 + IDLE_TAIL_SECONDS;
    expect(spends[0]!.seconds + spends[1]!.seconds).toBeGreaterThanOrEqual(life - 2);
    expect(spends[0]!.seconds + spends[1]!.seconds).toBeLessThanOrEqual(life);
    const mark = Number(await readFile(path.join(instanceDir, CHARGED_UNTIL_FILE), 'utf8'));
    expect(mark).toBeGreaterThanOrEqual(secondEnd - 1000 + IDLE_TAIL_SECONDS * 1000);
    expect(mark).toBeLessThanOrEqual(secondEnd + IDLE_TAIL_SECONDS * 1000);
    const budget = await h.ledger.budget(name);
    expect(budget.spent_usd).toBeCloseTo(spends[0]!.usd + spends[1]!.usd, 12);
    expect(budget.reserved_usd).toBeCloseTo(0, 12);
  });

  it('a model on 1 GPU of a 4-GPU instance holds and is charged the whole instance: the GPUs it leaves free are billed whether or not another job takes them', async () => {
    const name = 'ptrue-share';
    await upload(name, campaignDoc(name, undefined, { instance_type: 'g5.12xlarge', gpus: 1 }));
    const job = (await planWave(name, 'exec-share', [], 'g5.12xlarge')).wave.gpu.jobs[0]!;
    expect(job.resources).toEqual(expect.arrayContaining([{ Type: 'GPU', Value: '1' }]));
    const gpu = { instance_type: 'g5.12xlarge', capacity: 'spot' as const };
    const { dir: instanceDir } = await tempDir('gpu-instance-share');
    const bootedAt = Date.now() - 600_000;
    const clock = { uptimeSeconds: () => (Date.now() - bootedAt) / 1000, dir: instanceDir };
    const { held, spends, log, publishSpend } = budgetWatch(name);

    const start = Date.now();
    const code = await runChild(job, 1, path.join(dir, 'vllm-share.log'), { log, startedAtMs: start, instanceClock: clock, publishSpend });

    expect(code).toBe(EXIT_CODES.ok);
    // Held: the attempt's bound at the whole instance's on-demand price, not a quarter of it.
    const wholeOnDemand = gpuInstance('g5.12xlarge').on_demand_per_hour;
    const heldUsd = (await Promise.all(held))[0]!;
    expect(heldUsd).toBeCloseTo(instanceBound(gpu, GPU_JOB.attemptTimeoutSeconds, (start - bootedAt) / 1000).usd, 4);
    expect(heldUsd).toBeGreaterThan(((GPU_JOB.attemptTimeoutSeconds + IDLE_TAIL_SECONDS) / 3600) * wholeOnDemand);
    // Charged: every second of the instance at its whole Spot price.
    expect(spends).toHaveLength(1);
    expect(spends[0]!.usd).toBeCloseTo((spends[0]!.seconds / 3600) * wholeOnDemand * GPU_CATALOG.spot_fraction, 12);
    expect(spends[0]!.seconds).toBeGreaterThanOrEqual((start - bootedAt) / 1000 + IDLE_TAIL_SECONDS);
    // A prompt is priced as the AWS route charges it, locally and in the plan: the whole instance's hour.
    const { ctx, phase, entry } = await loadJobContext(name);
    expect(priceIn(ctx, phase, entry).per_request_usd).toBeCloseTo((wholeOnDemand * GPU_CATALOG.spot_fraction) / 3600 / 0.002, 12);
    const budget = await h.ledger.budget(name);
    expect(budget.spent_usd).toBeCloseTo(spends[0]!.usd, 12);
    expect(budget.reserved_usd).toBeCloseTo(0, 12);
  });

  it('an attempt whose bound the budget cannot hold starts no vLLM, asks nothing, and is charged only the time it ran', async () => {
    const name = 'ptrue-capped';
    await upload(name, campaignDoc(name, undefined));
    const job = (await planWave(name, 'exec-c')).wave.gpu.jobs[0]!;
    // Lambda workers of the same wave took the headroom meanwhile.
    const b = await h.ledger.budget(name);
    expect(await h.ledger.reserve(name, 'lambda-meanwhile', b.cap_usd - b.spent_usd - b.reserved_usd - 1)).toBe(true);
    const logFile = path.join(dir, 'vllm-capped.log');
    const spends: GpuSpend[] = [];

    const code = await runChild(job, 1, logFile, { publishSpend: async (sp) => void spends.push(sp) });

    expect(code).toBe(EXIT_CODES.ok);
    expect(await lines(logFile)).toEqual([]);
    expect((await h.ledger.counts(name, 'generate')).done).toBe(0);
    expect(spends).toHaveLength(1);
    const after = await h.ledger.budget(name);
    expect(after.spent_usd).toBeCloseTo(spends[0]!.usd, 12);
    expect(after.spent_usd + after.reserved_usd).toBeLessThanOrEqual(after.cap_usd);
  });

  it('the plan submits no more GPU children than the headroom holds bounds for; the rest stay pending', async () => {
    const name = 'ptrue-headroom';
    // generate at 0.002 prompts/s: several children of about an hour each.
    await upload(name, campaignDoc(name, undefined));
    const first = await planWave(name, 'exec-h');
    const all = first.wave.gpu.jobs[0]!.children;
    expect(all).toBeGreaterThanOrEqual(2);
    const bound = instanceBound({ instance_type: 'g5.xlarge', capacity: 'spot' }, GPU_JOB.attemptTimeoutSeconds).usd;
    const free = async () => {
      const b = await h.ledger.budget(name);
      return b.cap_usd - b.spent_usd - b.reserved_usd - b.possibly_billed_usd;
    };
    // Leave room for one bound and a half (what others hold counts, reserved or possibly billed).
    expect(await h.ledger.reserve(name, 'elsewhere', (await free()) - 1.5 * bound)).toBe(true);

    const again = await planWave(name, 'exec-h');

    expect(again.wave.gpu.jobs.map((j) => j.children)).toEqual([1]);
    expect(await h.ledger.reserve(name, 'elsewhere-2', (await free()) - 0.5 * bound)).toBe(true);
    expect((await planWave(name, 'exec-h')).wave.gpu.jobs).toEqual([]);
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
