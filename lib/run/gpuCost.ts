/**
 * What the runs_on: gpu models of a campaign cost on AWS Batch, before anything is deployed or
 * spent (`sondage plan --aws`): GPU hours and dollars per model and phase on the chosen instance
 * type and capacity, at the throughput the campaign states (or the default assumption, said so),
 * the time each array child spends starting (instance, image, weights) and the idle minutes Batch
 * keeps its instance after it, the other capacity's price beside the chosen one, what the children's
 * attempts reserve before they start (the most the budget can be charged for them), and the NAT
 * gateway the GPU VPC keeps with what it carries. The whole instance is priced, whatever `gpu.gpus`
 * asks, as the job is charged (lib/gpu/instanceTime.ts). Pure arithmetic over the plan, cut as the
 * plan handler cuts GPU shards (lib/run/planWave.ts).
 */
import type { PhaseSpec } from '../battery/types.js';
import { GPU_JOB } from '../config/sizing.js';
import type { ModelEntry } from '../design/campaign.js';
import { GPU_CATALOG, gpuInstance, hourlyPrice } from '../gpu/instances.js';
import type { GpuCapacity } from '../gpu/instances.js';
import { DTYPE_BYTES, paramsFromName } from '../gpu/memory.js';
import { IDLE_TAIL_SECONDS, instanceBound } from '../gpu/instanceTime.js';
import { promptsPerSecond } from '../gpu/settings.js';
import type { AwsPrices } from './awsCost.js';
import { loadAwsPrices } from './awsCost.js';
import { answererOf, settingsIn } from './context.js';
import type { RunContext } from './context.js';
import type { Plan } from './planCampaign.js';
import { gpuSeconds, gpuShardItems, packShards, slices } from './shards.js';

type CostContext = Pick<RunContext, 'campaign' | 'battery' | 'graph'>;

export interface GpuCostLine {
  /** The GPU model (a role's entry id for a phase a role answers). */
  readonly model: string;
  readonly phase: string;
  readonly instanceType: string;
  readonly gpus: number;
  readonly capacity: GpuCapacity;
  readonly items: number;
  readonly promptsPerSecond: number;
  /** False when prompts/s is the default assumption, not the campaign's. */
  readonly stated: boolean;
  /** Array children (groups of shards, about an hour of work each): each loads the model once. */
  readonly shards: number;
  /** items / prompts per second: what the budget charges. */
  readonly computeHours: number;
  /** shards × GPU_JOB.startupMinutes: instance, image and weights before the first prompt. */
  readonly startupHours: number;
  /** shards × the idle tail (IDLE_TAIL_SECONDS): the minutes Batch keeps a child's instance after it, charged by the child. */
  readonly idleHours: number;
  /** USD for both at the chosen capacity, and at each capacity. */
  readonly usd: number;
  readonly usdBy: Readonly<Record<GpuCapacity, number>>;
  /** Of `usd`, the compute hours: what a local run against a vLLM server charges per prompt. */
  readonly budgetedUsd: number;
  /**
   * What the children's first attempts reserve on AWS before anything runs: shards × the attempt's
   * bound (the 4-hour timeout, the kill grace, the assumed start-up and the idle tail, at on-demand).
   * No attempt is charged more than it reserved; a retry reserves again, as a retried API call does.
   */
  readonly reservedUsd: number;
}

export interface GpuCostEstimate {
  readonly lines: readonly GpuCostLine[];
  readonly totalUsd: number;
  readonly budgetedUsd: number;
  readonly reservedUsd: number;
  readonly nat: {
    /** The NAT gateway is billed every hour the stack is deployed, GPU jobs or not. */
    readonly perMonthUsd: number;
    /** Hours of this campaign's GPU jobs run one after another: an upper bound on the NAT hours it adds. */
    readonly campaignHours: number;
    /** Bytes through the NAT: weights downloaded from the Hugging Face Hub (gpu.hub), once per array child. */
    readonly dataBytes: number;
    readonly dataUsd: number;
  };
  readonly catalog: { readonly version: string; readonly verified: boolean; readonly spotFraction: number };
  readonly prices: Pick<AwsPrices, 'version' | 'region' | 'verified'>;
}

/** Hours in a month as AWS bills them. */
const MONTH_HOURS = 730;

/**
 * The GPU part of one execution of `plan` on the deployed stack.
 * @example formatGpuCost(estimateGpuCost(planCampaign(ctx), ctx))
 */
export function estimateGpuCost(plan: Plan, ctx: CostContext, prices: AwsPrices = loadAwsPrices()): GpuCostEstimate {
  const byId = new Map<string, ModelEntry>(ctx.campaign.models.map((m) => [m.id, m]));
  const acc = new Map<string, { entry: ModelEntry; phase: PhaseSpec; items: number; slices: { start: number; end: number }[] }>();
  for (const p of plan.partitions) {
    const subject = byId.get(p.model);
    if (!subject) continue;
    for (const phase of ctx.graph.phases) {
      const items = p.items[phase.name] ?? 0;
      const entry = answererOf(ctx, phase, subject);
      if (items === 0 || entry.runs_on !== 'gpu' || !entry.gpu) continue;
      // Cut as the plan cuts it: a root phase over its items, a dependent one over its source items.
      const source = phase.after[0]?.phase;
      const cutOver = source === undefined ? items : (p.items[source] ?? items);
      const size = (phase.shard ?? 'by-source') === 'partition' ? Math.max(1, cutOver) : gpuShardItems(ctx, phase, entry);
      const key = `${entry.id}\u0000${phase.name}`;
      const a = acc.get(key) ?? { entry, phase, items: 0, slices: [] };
      a.items += items;
      a.slices.push(...slices(cutOver, size));
      acc.set(key, a);
    }
  }
  let hubBytes = 0;
  const lines: GpuCostLine[] = [];
  for (const { entry, phase, items, slices: cut } of acc.values()) {
    // Children as the plan groups the shards (packShards, about an hour of work each), each loading the model once.
    const shards = packShards(cut, (s) => gpuSeconds(ctx, phase, entry, s.end - s.start), GPU_JOB.shardSeconds).length;
    const gpu = entry.gpu!;
    const inst = gpuInstance(gpu.instance_type);
    const gpus = gpu.gpus ?? inst.gpus;
    const t = promptsPerSecond(gpu, phase.name, settingsIn(ctx, phase, entry).max_tokens);
    const computeHours = items / t.promptsPerSecond / 3600;
    const startupHours = (shards * GPU_JOB.startupMinutes) / 60;
    const idleHours = (shards * IDLE_TAIL_SECONDS) / 3600;
    // The whole instance, as the job is charged: GPUs the model leaves free are billed all the same.
    const at = (c: GpuCapacity) => hourlyPrice(gpu.instance_type, c);
    const hours = computeHours + startupHours + idleHours;
    const usdBy = { spot: hours * at('spot'), 'on-demand': hours * at('on-demand') };
    lines.push({
      model: entry.id,
      phase: phase.name,
      instanceType: gpu.instance_type,
      gpus,
      capacity: gpu.capacity,
      items,
      promptsPerSecond: t.promptsPerSecond,
      stated: t.stated,
      shards,
      computeHours,
      startupHours,
      idleHours,
      usd: usdBy[gpu.capacity],
      usdBy,
      budgetedUsd: computeHours * at(gpu.capacity),
      reservedUsd: shards * instanceBound(gpu, GPU_JOB.attemptTimeoutSeconds).usd,
    });
    if (gpu.hub && entry.provider !== 'simulated') {
      const paramsB = gpu.params_b ?? paramsFromName(entry.model) ?? 0;
      hubBytes += shards * paramsB * 1e9 * DTYPE_BYTES[gpu.dtype];
    }
  }
  const campaignHours = lines.reduce((s, l) => s + l.computeHours + l.startupHours + l.idleHours, 0);
  const nat = {
    perMonthUsd: lines.length > 0 ? MONTH_HOURS * prices.nat_gateway.per_hour : 0,
    campaignHours,
    dataBytes: hubBytes,
    dataUsd: (hubBytes / 1e9) * prices.nat_gateway.per_gb_processed,
  };
  return {
    lines,
    totalUsd: lines.reduce((s, l) => s + l.usd, 0) + nat.dataUsd + campaignHours * prices.nat_gateway.per_hour,
    budgetedUsd: lines.reduce((s, l) => s + l.budgetedUsd, 0),
    reservedUsd: lines.reduce((s, l) => s + l.reservedUsd, 0),
    nat,
    catalog: { version: GPU_CATALOG.version, verified: GPU_CATALOG.verified, spotFraction: GPU_CATALOG.spot_fraction },
    prices: { version: prices.version, region: prices.region, verified: prices.verified },
  };
}

/** The estimate as a table per model and phase, then the NAT gateway and what is assumed. */
export function formatGpuCost(est: GpuCostEstimate): string {
  if (est.lines.length === 0) return 'no runs_on: gpu model';
  const usd = (x: number): string => `$${x.toFixed(x < 1 ? 4 : 2)}`;
  const hours = (h: number): string => (h < 10 ? h.toFixed(2) : h.toFixed(1));
  const rows = [
    ['model', 'phase', 'instance', 'capacity', 'items', 'prompts/s', 'children', 'GPU h', 'cost', 'spot | on-demand', 'max (reserved)'],
    ...est.lines.map((l) => [
      l.model,
      l.phase,
      l.gpus === gpuInstance(l.instanceType).gpus ? l.instanceType : `${l.instanceType} (${l.gpus} GPU)`,
      l.capacity,
      String(l.items),
      `${l.promptsPerSecond}${l.stated ? '' : ' (assumed)'}`,
      String(l.shards),
      `${hours(l.computeHours)} + ${hours(l.startupHours)} + ${hours(l.idleHours)}`,
      usd(l.usd),
      `${usd(l.usdBy.spot)} | ${usd(l.usdBy['on-demand'])}`,
      usd(l.reservedUsd),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const table = rows.map((r) => r.map((cell, c) => (c >= 4 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ')).join('\n');
  const assumed = est.lines.some((l) => !l.stated);
  const out = [
    table,
    'GPU h = prompts at prompts/s + one start-up per array child (instance, image, weights: ' +
      `${GPU_JOB.startupMinutes} min assumed) + the idle minutes Batch keeps its instance after it (${IDLE_TAIL_SECONDS / 60} min), ` +
      "each at the whole instance's price, whatever share of its GPUs the model uses.",
    `On AWS the budget charges each attempt's measured instance time; max (reserved) = what the children's attempts hold before they start ` +
      `(${GPU_JOB.attemptTimeoutSeconds / 3600} h timeout + 30 s + ${GPU_JOB.startupMinutes} min + ${IDLE_TAIL_SECONDS / 60} min at on-demand each; ${usd(est.reservedUsd)} in all), ` +
      `and no attempt is charged more than it held (one that measures a longer start holds that much more; a retry holds again). ` +
      `The plan's table above prices these models per prompt, as a local run against a vLLM server charges them (${usd(est.budgetedUsd)}); on AWS their max is this one.`,
    `NAT gateway: ${usd(est.nat.perMonthUsd)} a month while the GPU stack is deployed (${usd(est.nat.perMonthUsd / MONTH_HOURS)} an hour, ` +
      `about ${hours(est.nat.campaignHours)} h of GPU jobs here, one after another), and ${usd(est.nat.dataUsd)} of data processing` +
      (est.nat.dataBytes > 0 ? ` (${(est.nat.dataBytes / 1e9).toFixed(1)} GB of weights from the Hugging Face Hub)` : ' (weights come from the bucket through the S3 endpoint, free)') +
      '.',
    `GPU total: ${usd(est.totalUsd)} for this campaign, the NAT gateway's month aside.`,
    `instance prices: ${est.prices.region}, catalog ${est.catalog.version}${est.catalog.verified ? '' : ' (unverified: typed in offline; check the EC2 pricing page)'}; ` +
      `Spot assumed at ${Math.round(est.catalog.spotFraction * 100)} % of on-demand (Spot prices move; a reclaimed child is retried and resumes).`,
  ];
  if (assumed) out.push('prompts/s marked (assumed) are defaults, not measurements: measure with bench/gpu-probe.sh and set gpu.prompts_per_second.');
  return out.join('\n');
}
