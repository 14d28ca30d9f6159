/**
 * P(True) at the paper's size priced on AWS, GPU hours included: the design of
 * `bench:local-throughput -- --battery ptrue --full` (Disentangling Question, Response, and
 * Verifier Languages §3.2: 2,880 base items × 6 question × 6 response languages, each reply probed
 * in 6 verifier languages) on a panel of ten open-weight models and an open-weight judge, every one
 * `runs_on: gpu`, through what `sondage plan --aws` computes: the plan of every item, then the GPU
 * hours and dollars per model and phase (lib/run/gpuCost.ts). It prints that table, the totals by
 * phase beside the paper's own count (its "Ethics and Reproducibility": ~1,717 GPU hours for the
 * final runs, 1,248 of them the correctness judge's), and the plan's time and peak RSS.
 *
 *   npm run bench:ptrue-aws-plan                                  # the assumed prompts/s (2 and 20)
 *   npm run bench:ptrue-aws-plan -- --generate 8 --verify 60      # prompts/s as measured (bench/gpu-probe.sh)
 *   npm run bench:ptrue-aws-plan -- --items 288                   # a tenth of the items
 *
 * The panel: §3.3 has ten instruction-tuned 3B–14B models from the Qwen, Llama, Gemma, Mistral and
 * Aya families, Qwen3-8B among them (§3.4); the other nine below are this bench's choice within
 * those families and sizes. The judge's model is not named either: a 70B
 * class model on a 4-GPU L40S instance is this bench's choice. The entries are dry-run entries
 * (`provider: simulated` with `runs_on: gpu`, which the campaign schema allows): the GPU price
 * depends on the instance type, the prompts per second and the item counts, not on the provider,
 * and a dry run needs no token ids for the Mistral and Aya tokenizers, which the battery does not
 * list (lib/batteries/ptrue/read/labels.ts).
 */
import { readFile, rm, writeFile, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parse, stringify } from 'yaml';
import { writePtrueCampaign } from './batteryCampaigns.js';
import { loadRunContext } from '../lib/run/context.js';
import { estimateGpuCost, formatGpuCost } from '../lib/run/gpuCost.js';
import { planCampaign } from '../lib/run/planCampaign.js';

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '2880' },
    generate: { type: 'string' },
    verify: { type: 'string' },
    judge: { type: 'string' },
    capacity: { type: 'string', default: 'spot' },
  },
});

/** Ten 3B–14B instruction-tuned models of the five families of §3.3, with the GPU each fits on. */
const PANEL: readonly { readonly id: string; readonly model: string; readonly instance: string }[] = [
  { id: 'qwen3-8b', model: 'Qwen/Qwen3-8B', instance: 'g6e.xlarge' },
  { id: 'qwen3-14b', model: 'Qwen/Qwen3-14B', instance: 'g6e.xlarge' },
  { id: 'qwen2.5-7b', model: 'Qwen/Qwen2.5-7B-Instruct', instance: 'g6e.xlarge' },
  { id: 'llama-3.2-3b', model: 'meta-llama/Llama-3.2-3B-Instruct', instance: 'g6.xlarge' },
  { id: 'llama-3.1-8b', model: 'meta-llama/Llama-3.1-8B-Instruct', instance: 'g6e.xlarge' },
  { id: 'gemma-3-4b', model: 'google/gemma-3-4b-it', instance: 'g6.xlarge' },
  { id: 'gemma-3-12b', model: 'google/gemma-3-12b-it', instance: 'g6e.xlarge' },
  { id: 'mistral-7b', model: 'mistralai/Mistral-7B-Instruct-v0.3', instance: 'g6e.xlarge' },
  { id: 'mistral-nemo-12b', model: 'mistralai/Mistral-Nemo-Instruct-2407', instance: 'g6e.xlarge' },
  { id: 'aya-expanse-8b', model: 'CohereLabs/aya-expanse-8b', instance: 'g6e.xlarge' },
];

/** The paper's count ("Ethics and Reproducibility"): final runs ~1,717 GPU hours, 1,248 of them the judge's. */
const PAPER_GPU_HOURS = { total: 1717, judge: 1248 };

const capacity = values.capacity;
if (capacity !== 'spot' && capacity !== 'on-demand') throw new Error(`--capacity ${capacity}: use spot or on-demand`);
const positive = (flag: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!(n > 0)) throw new Error(`--${flag} ${v}: expected prompts per second, a positive number`);
  return n;
};
const rates = { generate: positive('generate', values.generate), verify: positive('verify', values.verify), judge: positive('judge', values.judge) };
const items = Number(values.items);
if (!Number.isInteger(items) || items < 1) throw new Error(`--items ${values.items}: expected a whole number of base items`);

/** A phase's stated prompts/s, where given: `{ generate: 8, verify: 60 }`. */
function statedRates(phases: readonly ('generate' | 'verify' | 'judge')[]): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  for (const p of phases) if (rates[p] !== undefined) out[p] = rates[p];
  return Object.keys(out).length > 0 ? out : undefined;
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-bench-aws-plan-'));
try {
  const file = await writePtrueCampaign(dir, { items, models: PANEL.length });
  const campaign = parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  const subjectRates = statedRates(['generate', 'verify']);
  const judgeRates = statedRates(['judge']);
  campaign['models'] = PANEL.map((m) => ({
    id: m.id,
    provider: 'simulated',
    model: m.model,
    runs_on: 'gpu',
    gpu: { instance_type: m.instance, capacity, ...(subjectRates ? { prompts_per_second: subjectRates } : {}) },
  }));
  // The demo's judge (its settings and simulation) without its token price: a GPU model is charged its instance hours.
  const { price: _tokenPrice, ...judge } = campaign['judge'] as Record<string, unknown>;
  campaign['judge'] = {
    ...judge,
    model: 'open-weight-judge-70b',
    runs_on: 'gpu',
    gpu: { instance_type: 'g6e.12xlarge', capacity, ...(judgeRates ? { prompts_per_second: judgeRates } : {}) },
  };
  await writeFile(file, stringify(campaign));

  const t0 = performance.now();
  const ctx = await loadRunContext(file);
  const plan = planCampaign(ctx);
  const gpu = estimateGpuCost(plan, ctx);
  const seconds = (performance.now() - t0) / 1000;
  const peakMiB = process.resourceUsage().maxRSS / 1024;

  // Instance hours, and GPU hours as the paper counts them: an instance's hours times the GPUs the model uses.
  const lines = (phase?: string) => gpu.lines.filter((l) => phase === undefined || l.phase === phase);
  const hours = (phase?: string) => lines(phase).reduce((s, l) => s + l.computeHours + l.startupHours + l.idleHours, 0);
  const gpuHours = (phase?: string) => lines(phase).reduce((s, l) => s + l.gpus * (l.computeHours + l.startupHours + l.idleHours), 0);
  const usd = (phase?: string) => lines(phase).reduce((s, l) => s + l.usd, 0);
  const count = (phase: string) => gpu.lines.filter((l) => l.phase === phase).reduce((s, l) => s + l.items, 0);
  const h = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
  // Hours to a tenth: a small --items has phases of a few hours.
  const hr = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  console.log(`ptrue-aws-plan: ${items} base items × 6 × 6 languages × ${PANEL.length} models on runs_on: gpu, 6 verifier languages, a judge on GPU (${capacity})`);
  console.log(`\n${formatGpuCost(gpu)}\n`);
  console.log(`| phase | prompts | instance hours | GPU hours | ${capacity} |`);
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const phase of ['generate', 'verify', 'judge']) console.log(`| ${phase} | ${h(count(phase))} | ${hr(hours(phase))} | ${hr(gpuHours(phase))} | $${h(usd(phase))} |`);
  console.log(`| all | ${h(plan.totals.items)} | ${hr(hours())} | ${hr(gpuHours())} | $${h(usd())} |`);
  console.log(`\nThe paper's final runs: ~${h(PAPER_GPU_HOURS.total)} GPU hours, ${h(PAPER_GPU_HOURS.judge)} of them the judge's, ${h(PAPER_GPU_HOURS.total - PAPER_GPU_HOURS.judge)} the models' generation and probes.`);
  console.log(`GPU cost ${capacity}: $${gpu.totalUsd.toFixed(0)} (NAT gateway hours and data included); reserved before the children start: $${gpu.reservedUsd.toFixed(0)}`);
  console.log(`plan: ${plan.totals.items} requests in ${plan.partitions.length} partitions, ${seconds.toFixed(1)} s, peak RSS ${peakMiB.toFixed(0)} MiB`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
