/**
 * A runs_on: gpu model at `sondage plan`: bad input refused with the file, the field and the line
 * before anything is deployed or spent (no instance type, a model too large for the GPU memory,
 * no weights, an unknown size, a token price, a provider vLLM cannot stand for), and `plan --aws`
 * giving GPU hours and dollars per model and phase, the throughput assumption, Spot and on-demand,
 * and the NAT gateway. The plan handler's own checks against the deployed stack (a queue for the
 * instance type, the weights in the bucket) are tested at the bottom.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPU_CATALOG, gpuInstance, hourlyPrice, jobResources } from '../../lib/gpu/instances.js';
import { estimateGpuMemory, paramsFromName } from '../../lib/gpu/memory.js';
import { gpuPhasePrice } from '../../lib/gpu/gpuPrice.js';
import { IDLE_TAIL_SECONDS, instanceBound } from '../../lib/gpu/instanceTime.js';
import { GPU_JOB } from '../../lib/config/sizing.js';
import { vllmServeArgs } from '../../lib/gpu/vllmArgs.js';
import { CampaignFileError } from '../../lib/errors.js';
import { loadRunContext } from '../../lib/run/context.js';
import { checkGpuQueues, checkGpuWeights } from '../../lib/run/gpuChecks.js';
import { estimateGpuCost } from '../../lib/run/gpuCost.js';
import { planCampaign } from '../../lib/run/planCampaign.js';
import { LocalBlobStore } from '../../lib/store/index.js';
import { REPO_ROOT, tempDir, writeCampaignDoc } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('plan-gpu'));
  await writeFile(path.join(dir, 'items.jsonl'), await readFile(path.join(REPO_ROOT, 'examples/ptrue/items.jsonl')));
});
afterAll(() => cleanup());

const QWEN = { id: 'qwen', provider: 'openai-compatible', model: 'Qwen/Qwen3-8B', runs_on: 'gpu' };

function campaign(name: string, model: Record<string, unknown>, more: Record<string, unknown>[] = []): Promise<string> {
  return writeCampaignDoc(dir, {
    name,
    seed: 1,
    budget_usd: 100,
    battery: 'ptrue',
    design: { items: 'items.jsonl', languages: ['en', 'fr'], verifier_languages: ['en', 'fr'], item_limit: 4 },
    models: [model, ...more],
  });
}

describe('bad GPU settings at plan: one error naming the file, the field and the line', () => {
  it.each([
    ['runs_on: gpu without an instance type', { ...QWEN }, /models\[0\]\.gpu\.instance_type: is required for runs_on: gpu; the EC2 instance type of the model's AWS Batch queue, one of g5\.12xlarge, .* \(line \d+\)/],
    ['an instance type sondage does not know', { ...QWEN, gpu: { instance_type: 'p9.mega', weights_prefix: 'weights/q/' } }, /models\[0\]\.gpu\.instance_type: "p9\.mega" is not a GPU instance type sondage knows; use one of/],
    [
      'a model too large for the GPU memory, an estimate',
      { ...QWEN, model: 'Qwen/Qwen3-32B', gpu: { instance_type: 'g5.xlarge', weights_prefix: 'weights/qwen3-32b/' } },
      /models\[0\]\.gpu\.instance_type: "Qwen\/Qwen3-32B" needs about 71\.5 GiB of GPU memory \(an estimate: 32 B parameters × 2 bytes \(bfloat16\) × 1\.2 for activations and the KV cache\), against 21\.6 GiB vLLM gets \(1 × 24 GiB NVIDIA A10G at gpu_memory_utilization 0\.9\): it does not fit g5\.xlarge; choose an instance type with more GPU memory \(the cheapest that fits: g6\.12xlarge\)/,
    ],
    ['no weights', { ...QWEN, gpu: { instance_type: 'g5.xlarge' } }, /models\[0\]\.gpu\.weights_prefix: is required for runs_on: gpu: the key prefix in the stack's data bucket where the model's files are uploaded \(e\.g\. weights\/qwen3-8b\/\), or set gpu\.hub: true to download "Qwen\/Qwen3-8B" from the Hugging Face Hub/],
    ['a weights prefix outside weights/', { ...QWEN, gpu: { instance_type: 'g5.xlarge', weights_prefix: 'campaigns/x/' } }, /models\[0\]\.gpu\.weights_prefix: "campaigns\/x\/" is not a weights prefix; use a key prefix under weights\//],
    ['a size the name does not tell', { ...QWEN, model: 'acme/house-model', gpu: { instance_type: 'g5.xlarge', hub: true } }, /models\[0\]\.gpu\.params_b: cannot tell how many parameters "acme\/house-model" has from its name; give params_b/],
    ['a token price on a GPU model', { ...QWEN, price: { input_per_mtok: 0, output_per_mtok: 0 }, gpu: { instance_type: 'g5.xlarge', hub: true } }, /models\[0\]\.price: a runs_on: gpu model is charged for its instance hours/],
    ['an API provider on a GPU', { id: 'g', provider: 'openai', model: 'gpt-4.1-mini', runs_on: 'gpu', gpu: { instance_type: 'g5.xlarge', hub: true } }, /models\[0\]\.provider: runs_on: gpu serves the model with vLLM/],
    ['gpu settings without runs_on: gpu', { id: 'q', provider: 'openai-compatible', model: 'Qwen/Qwen3-8B', base_url: 'http://localhost:8000/v1', price: { input_per_mtok: 0, output_per_mtok: 0 }, gpu: { instance_type: 'g5.xlarge' } }, /models\[0\]\.gpu: gpu settings apply only to a model that runs_on: gpu/],
    ['more GPUs than the instance has', { ...QWEN, gpu: { instance_type: 'g6e.xlarge', gpus: 2, hub: true } }, /models\[0\]\.gpu\.gpus: g6e\.xlarge has 1 GPU\(s\)/],
  ])('%s', async (name, model, expected) => {
    const file = await campaign(`bad-${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`.slice(0, 60), model);

    const { code, stdout, stderr } = await runMain(['plan', file, '--aws']);

    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(file);
    expect(stderr).toMatch(expected);
  });
});

describe('sondage plan --aws with a GPU model', () => {
  it('gives GPU hours and dollars per model and phase, the throughput assumption, Spot beside on-demand, and the NAT gateway', async () => {
    const file = await campaign('plan-gpu', { ...QWEN, gpu: { instance_type: 'g6e.xlarge', weights_prefix: 'weights/qwen3-8b/', prompts_per_second: { generate: 4 } } }, [
      { id: 'big', provider: 'openai-compatible', model: 'meta-llama/Llama-3.1-70B-Instruct', runs_on: 'gpu', gpu: { instance_type: 'g6e.12xlarge', capacity: 'on-demand', hub: true, prompts_per_second: 1 } },
      { id: 'quarter', provider: 'openai-compatible', model: 'Qwen/Qwen3-8B', runs_on: 'gpu', gpu: { instance_type: 'g5.12xlarge', gpus: 1, weights_prefix: 'weights/qwen3-8b/' } },
    ]);
    const ctx = await loadRunContext(file);
    const plan = planCampaign(ctx);

    const { code, stdout, stderr } = await runMain(['plan', file, '--aws']);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('GPU models on AWS Batch (runs_on: gpu):');
    const est = estimateGpuCost(plan, ctx);
    const gen = est.lines.find((l) => l.model === 'qwen' && l.phase === 'generate')!;
    const verify = est.lines.find((l) => l.model === 'qwen' && l.phase === 'verify')!;
    // generate: stated 4 prompts/s; verify: one token, the default probe assumption (20/s), said to be assumed.
    expect(gen).toMatchObject({ instanceType: 'g6e.xlarge', capacity: 'spot', promptsPerSecond: 4, stated: true });
    expect(verify).toMatchObject({ promptsPerSecond: 20, stated: false });
    expect(gen.items).toBe(plan.partitions.filter((p) => p.model === 'qwen').reduce((s, p) => s + p.items['generate']!, 0));
    expect(gen.computeHours).toBeCloseTo(gen.items / 4 / 3600, 12);
    // Each child: its start-up, and the idle minutes Batch keeps its instance after it, which the child is charged.
    expect(gen.idleHours).toBeCloseTo((gen.shards * IDLE_TAIL_SECONDS) / 3600, 12);
    expect(gen.usd).toBeCloseTo((gen.computeHours + gen.startupHours + gen.idleHours) * 1.861 * GPU_CATALOG.spot_fraction, 9);
    expect(gen.usdBy['on-demand']).toBeCloseTo((gen.computeHours + gen.startupHours + gen.idleHours) * 1.861, 9);
    // max (reserved): what the children's attempts hold before they start, the bound each settles within.
    expect(gen.reservedUsd).toBeCloseTo(gen.shards * instanceBound({ instance_type: 'g6e.xlarge', capacity: 'spot' }, GPU_JOB.attemptTimeoutSeconds).usd, 9);
    expect(gen.reservedUsd).toBeGreaterThan(gen.usdBy['on-demand']);
    expect(stdout).toMatch(/spot \| on-demand\s+max \(reserved\)/);
    expect(stdout).toContain(`$${est.reservedUsd.toFixed(2)} in all`);
    expect(stdout).toContain("The plan's table above prices these models per prompt, as a local run against a vLLM server charges them");
    // The plan's model cost for qwen's generate is the budgeted part: its compute hours at the Spot price.
    const planLine = plan.lines.find((l) => l.model === 'qwen' && l.phase === 'generate')!;
    expect(planLine.costUsd).toBeCloseTo(gen.budgetedUsd, 9);
    expect(stdout).toMatch(new RegExp(`qwen\\s+generate\\s+g6e\\.xlarge\\s+spot\\s+${gen.items}\\s+4\\s+\\d+`));
    expect(stdout).toMatch(/qwen\s+verify\s+g6e\.xlarge\s+spot\s+\d+\s+20 \(assumed\)/);
    expect(stdout).toMatch(/big\s+generate\s+g6e\.12xlarge\s+on-demand/);
    // A model on 1 GPU of a 4-GPU instance is priced, and bounded, at the whole instance: the other 3 are billed all the same.
    const quarter = est.lines.find((l) => l.model === 'quarter' && l.phase === 'generate')!;
    expect(quarter).toMatchObject({ instanceType: 'g5.12xlarge', gpus: 1 });
    expect(quarter.usdBy['on-demand']).toBeCloseTo((quarter.computeHours + quarter.startupHours + quarter.idleHours) * 5.672, 9);
    expect(quarter.reservedUsd).toBeCloseTo(quarter.shards * instanceBound({ instance_type: 'g5.12xlarge', capacity: 'spot' }, GPU_JOB.attemptTimeoutSeconds).usd, 9);
    expect(stdout).toMatch(/quarter\s+generate\s+g5\.12xlarge \(1 GPU\)/);
    // Hub weights go through the NAT gateway: 70 B × 2 bytes per job.
    const bigJobs = est.lines.filter((l) => l.model === 'big').reduce((s, l) => s + l.shards, 0);
    expect(est.nat.dataBytes).toBeCloseTo(bigJobs * 70e9 * 2, 0);
    expect(stdout).toContain('NAT gateway: $32.85 a month while the GPU stack is deployed');
    expect(stdout).toContain('GB of weights from the Hugging Face Hub');
    expect(stdout).toContain('Spot assumed at 40 % of on-demand');
    expect(stdout).toContain('measure with bench/gpu-probe.sh and set gpu.prompts_per_second');
    // The Lambda machinery prices no GPU item.
    expect(stdout).not.toMatch(/Lambda\s+generate/);
  });
});

describe('sondage run with a GPU model', () => {
  it('without a base_url, says to start it on AWS or give the URL of a vLLM of your own, before anything is written', async () => {
    const file = await campaign('run-gpu', { ...QWEN, gpu: { instance_type: 'g5.xlarge', weights_prefix: 'weights/qwen3-8b/' } });

    const { code, stderr } = await runMain(['run', file, '--data-dir', path.join(dir, 'run-gpu-data'), '--quiet']);

    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: models[0].base_url: qwen runs_on: gpu and has no base_url: \`sondage start --aws\` runs it on AWS Batch; to run it here, serve it with vLLM and give base_url`);
    expect(existsSync(path.join(dir, 'run-gpu-data'))).toBe(false);
  });
});

describe('the GPU arithmetic', () => {
  it('reads sizes from names, estimates memory, sizes jobs and prices prompts', () => {
    expect(['Qwen/Qwen3-8B', 'Qwen/Qwen2.5-0.5B-Instruct', 'meta-llama/Llama-3.1-70B-Instruct', 'mistralai/Mixtral-8x7B-v0.1', 'bigscience/bloom-560m', 'google/gemma-2-9b-it', 'acme/x'].map(paramsFromName)).toEqual([
      8, 0.5, 70, 56, 0.56, 9, undefined,
    ]);
    expect(estimateGpuMemory(8, 'bfloat16', gpuInstance('g5.xlarge'), 1).fits).toBe(true);
    expect(estimateGpuMemory(70, 'bfloat16', gpuInstance('g6e.12xlarge'), 4).fits).toBe(true);
    expect(estimateGpuMemory(70, 'int4', gpuInstance('g6e.xlarge'), 1).fits).toBe(true);
    expect(jobResources('g5.12xlarge', 2)).toEqual({ gpus: 2, vcpus: 24, memoryMib: (192 * 1024 - 1536) / 2 });
    expect(() => jobResources('g5.xlarge', 2)).toThrow(/g5\.xlarge has 1 GPU/);
    const p = gpuPhasePrice({ instance_type: 'g5.12xlarge', gpus: 2, capacity: 'on-demand', prompts_per_second: { verify: 50 } } as never, 'verify', 1);
    // The whole instance's hour, whatever share of its GPUs the model uses: what the AWS route charges.
    expect(p.price.per_request_usd).toBeCloseTo(5.672 / 3600 / 50, 12);
    expect(hourlyPrice('g5.xlarge', 'spot')).toBeCloseTo(1.006 * GPU_CATALOG.spot_fraction, 12);
    const args = vllmServeArgs({ model: 'Qwen/Qwen3-8B', weightsDir: '/w', gpu: { instance_type: 'g6e.12xlarge', capacity: 'spot', dtype: 'int4', gpu_memory_utilization: 0.85, in_flight: 128, startup_timeout_s: 60, commit_minutes: 5, max_model_len: 4096, extra_args: ['--enforce-eager'] } });
    expect(args).toEqual([
      '/w', '--host', '127.0.0.1', '--port', '8000', '--served-model-name', 'Qwen/Qwen3-8B', '--tensor-parallel-size', '4',
      '--gpu-memory-utilization', '0.85', '--max-num-seqs', '128', '--generation-config', 'vllm', '--max-model-len', '4096', '--enforce-eager',
    ]);
  });
});

describe('what the plan handler checks against the deployed stack, before anything is spent', () => {
  it('refuses a GPU model without a queue for its instance type and capacity, naming what the stack has', async () => {
    const file = await campaign('queue-check', { ...QWEN, gpu: { instance_type: 'g6e.xlarge', capacity: 'on-demand', weights_prefix: 'weights/qwen3-8b/' } });
    const ctx = await loadRunContext(file);
    expect(() => checkGpuQueues(ctx, undefined)).toThrow(/models\[0\]\.gpu\.instance_type: the deployed stack has no GPU queues; deploy it with `npx cdk deploy -c sondage:gpu=true -c sondage:gpuInstanceTypes=g6e\.xlarge`/);
    expect(() => checkGpuQueues(ctx, { 'g5.xlarge/spot': 'q1', 'g5.xlarge/on-demand': 'q2', 'g6e.xlarge/spot': 'q3' })).toThrow(
      /the deployed stack has no on-demand queue for g6e\.xlarge \(it has g5\.xlarge, g6e\.xlarge\)/,
    );
    expect(() => checkGpuQueues(ctx, { 'g6e.xlarge/on-demand': 'q' })).not.toThrow();
  });

  it('refuses weights that are not in the bucket, naming the field and how to upload them', async () => {
    const file = await campaign('weights-check', { ...QWEN, gpu: { instance_type: 'g5.xlarge', weights_prefix: 'weights/qwen3-8b/' } });
    const ctx = await loadRunContext(file);
    const bucket = new LocalBlobStore(path.join(dir, 'bucket'));
    const err = await checkGpuWeights(ctx, bucket).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CampaignFileError);
    expect(String(err)).toMatch(/models\[0\]\.gpu\.weights_prefix: nothing under weights\/qwen3-8b\/ in the data bucket; upload the model's files there first \(aws s3 sync/);
    await bucket.put('weights/qwen3-8b/model.safetensors', 'x');
    expect(String(await checkGpuWeights(ctx, bucket).catch((e: unknown) => e))).toMatch(/has 1 file\(s\) but no config\.json/);
    await bucket.put('weights/qwen3-8b/config.json', '{}');
    await expect(checkGpuWeights(ctx, bucket)).resolves.toBeUndefined();
  });
});
