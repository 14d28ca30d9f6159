/**
 * `sondage plan`: every item of every phase of the battery's graph, counted and priced, without
 * calling anything. Root phases are expanded and priced item by item; a dependent phase is
 * estimated by the battery from the items it will be built on, before their replies exist.
 */
import type { PhaseEstimate, PhaseSpec } from '../battery/types.js';
import type { PromptItem } from '../core/types.js';
import { forgetSharedValues } from '../core/hash.js';
import type { ModelEntry } from '../design/campaign.js';
import { costUsd, maxCostUsd } from '../pricing/pricing.js';
import type { Price } from '../providers/types.js';
import { priceIn } from './context.js';
import type { RunContext } from './context.js';
import { BEDROCK_BATCH_MIN_RECORDS, batchLimitsOf } from '../providers/batchLimits.js';
import { itemsBelowBatchMinimum } from './batchRemainder.js';
import { itemInputTokens, itemMaxCost } from './cost.js';
import { PartitionItems } from './partitionItems.js';

export { itemInputTokens, itemMaxCost } from './cost.js';

export interface PlanLine {
  readonly model: string;
  readonly phase: string;
  readonly provider: string;
  readonly items: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Expected cost at list price. */
  readonly costUsd: number;
  /**
   * What the provider's batch API would charge, where it has one: the items a batch cannot take
   * (below the provider's minimum per batch, Bedrock's 100 records) at the synchronous price, as
   * the run asks them (`syncItems`).
   */
  readonly batchCostUsd: number | null;
  /** Items a batch run asks synchronously, at list price, being fewer than a batch must hold (lib/run/batchRemainder.ts). */
  readonly syncItems?: number;
  /** Sum of per-call reservations: prompt + max_tokens at list price (the budget's worst case). */
  readonly maxCostUsd: number;
}

export interface PlanPartition {
  readonly model: string;
  readonly language: string;
  /** Items per phase (dependent phases: the battery's estimate before the replies exist). */
  readonly items: Readonly<Record<string, number>>;
}

export interface Plan {
  readonly campaign: string;
  readonly battery: string;
  readonly budgetUsd: number;
  /** The battery's phases for this campaign, in graph order. */
  readonly phases: readonly string[];
  /** The phases built from earlier phases' replies: their partitions' counts are the battery's estimates. */
  readonly dependent?: readonly string[];
  readonly lines: readonly PlanLine[];
  readonly totals: { readonly items: number; readonly costUsd: number; readonly maxCostUsd: number };
  readonly partitions: readonly PlanPartition[];
}

interface Acc {
  items: number;
  /** Of `items`, those a dependent phase's estimate counted (the rest were priced one by one). */
  estimated: number;
  inputTokens: number;
  outputTokens: number;
  /** Reservations, in USD, of items priced one by one (root phases). */
  maxCost: number;
  maxInputTokens: number;
  maxOutputTokens: number;
  /** Of the above, what a batch run asks synchronously (below the provider's minimum per batch): items, expected tokens, reservations (USD at list price). */
  syncItems: number;
  syncInputTokens: number;
  syncOutputTokens: number;
  syncMaxCost: number;
}

const emptyAcc = (): Acc => ({
  items: 0,
  estimated: 0,
  inputTokens: 0,
  outputTokens: 0,
  maxCost: 0,
  maxInputTokens: 0,
  maxOutputTokens: 0,
  syncItems: 0,
  syncInputTokens: 0,
  syncOutputTokens: 0,
  syncMaxCost: 0,
});

/**
 * Moves the share of one partition's addition to `acc` (from `before`) that a batch run asks
 * synchronously into the sync fields: all of it for a partition under the provider's minimum per
 * batch, the last piece's share otherwise (its items cost as much as the others on average).
 */
function noteSyncShare(acc: Acc, before: Acc, entry: ModelEntry, price: Price): void {
  const n = acc.items - before.items;
  const sync = itemsBelowBatchMinimum(n, batchLimitsOf(entry.provider));
  if (sync === 0) return;
  const share = sync / n;
  acc.syncItems += sync;
  acc.syncInputTokens += share * (acc.inputTokens - before.inputTokens);
  acc.syncOutputTokens += share * (acc.outputTokens - before.outputTokens);
  const { per_request_usd: _perRequest, ...tokens } = price;
  const estimatedMax = maxCostUsd(tokens, acc.maxInputTokens - before.maxInputTokens, acc.maxOutputTokens - before.maxOutputTokens);
  acc.syncMaxCost += share * (acc.maxCost - before.maxCost + estimatedMax);
}

/** Expected and reserved tokens of a root phase's items, one by one. */
function rootEstimate(phase: PhaseSpec, items: Iterable<PromptItem>, price: Price, acc: Acc): number {
  let n = 0;
  for (const item of items) {
    const max = item.settings.max_tokens;
    acc.items++;
    acc.inputTokens += itemInputTokens(item);
    acc.outputTokens += Math.min(max ?? Infinity, phase.expectedOutputTokens?.(item) ?? max ?? 1024);
    acc.maxCost += itemMaxCost(item, price);
    n++;
  }
  return n;
}

function addEstimate(acc: Acc, e: PhaseEstimate): void {
  acc.items += e.items;
  acc.estimated += e.items;
  acc.inputTokens += e.inputTokens;
  acc.outputTokens += e.outputTokens;
  acc.maxInputTokens += e.maxInputTokens;
  acc.maxOutputTokens += e.maxOutputTokens;
}

export interface PlanOptions {
  /** Called as each model × language partition is counted (the run starts its threads after the first). */
  readonly onPartition?: (partition: PlanPartition, index: number, total: number) => void;
}

/**
 * Counts every item of every phase and prices it, without calling anything. Streams the
 * expansion one model and language at a time, so a million-item plan holds one partition.
 */
export function planCampaign(ctx: Pick<RunContext, 'campaign' | 'battery' | 'design' | 'graph'>, opts: PlanOptions = {}): Plan {
  const { campaign, graph } = ctx;
  const lines: PlanLine[] = [];
  const partitions: PlanPartition[] = [];
  const charged: { cost: number; max: number }[] = [];
  // Root phases whose items a dependent phase's estimate reads whole (PartitionContext.items), as
  // the first partition shows: kept from then on and priced from what is kept. The others are
  // priced as they are expanded and not kept (PartitionItems.each). A battery's estimate that reads
  // no items (X-Value's step 2) keeps none; one that reads them whole (P(True)'s verify) has that
  // phase expanded twice in its first partition only; one that reads them in one pass
  // (PartitionContext.each: FAR-6's judge) has it expanded twice in every partition, and keeps none.
  const readByEstimates = new Set<string>();
  for (const model of campaign.models) {
    const accs = new Map(graph.phases.map((p) => [p.name, emptyAcc()]));
    const answerers = new Map<string, ModelEntry>();
    for (const language of ctx.design.languages) {
      const partition = new PartitionItems({ ctx, model, language, planning: true, onRead: (name) => readByEstimates.add(name) });
      const counts: Record<string, number> = {};
      for (const phase of graph.phases) {
        const acc = accs.get(phase.name)!;
        const answerer = partition.answerer(phase).entry;
        answerers.set(phase.name, answerer);
        const before = { ...acc };
        const price = priceIn(ctx, phase, answerer);
        if (phase.after.length === 0) {
          counts[phase.name] = rootEstimate(phase, readByEstimates.has(phase.name) ? partition.items(phase.name) : partition.each(phase.name), price, acc);
        } else {
          const e = phase.estimate!(partition.context(phase));
          addEstimate(acc, e);
          counts[phase.name] = e.items;
        }
        if (price.batch_discount !== undefined) noteSyncShare(acc, before, answerer, price);
      }
      partitions.push({ model: model.id, language, items: counts });
      // The design lives as long as the plan: what the caches kept of it would add up over every partition.
      forgetSharedValues();
      opts.onPartition?.(partitions.at(-1)!, partitions.length - 1, campaign.models.length * ctx.design.languages.length);
    }
    for (const phase of graph.phases) {
      const entry = answerers.get(phase.name) ?? model;
      const role = phase.answeredBy === 'subject' ? undefined : `${phase.verb ?? phase.name} ${model.id}`;
      const acc = accs.get(phase.name)!;
      lines.push(line(entry, phase.name, priceIn(ctx, phase, entry), acc, role));
      charged.push(chargedCost(entry, lines.at(-1)!, acc.syncMaxCost));
    }
  }
  const totals = {
    items: lines.reduce((s, l) => s + l.items, 0),
    costUsd: charged.reduce((s, c) => s + c.cost, 0),
    maxCostUsd: charged.reduce((s, c) => s + c.max, 0),
  };
  return {
    campaign: campaign.name,
    battery: ctx.battery.name,
    budgetUsd: campaign.budget_usd,
    phases: graph.phases.map((p) => p.name),
    dependent: graph.phases.filter((p) => p.after.length > 0).map((p) => p.name),
    lines,
    totals,
    partitions,
  };
}

/**
 * What the run will charge for a line: `mode: batch` runs (and reserves) at the batch price, but
 * for the items a batch cannot take, asked synchronously at list price (`batchCostUsd` has them so).
 */
function chargedCost(entry: ModelEntry, l: PlanLine, syncMaxCost: number): { cost: number; max: number } {
  if (entry.mode !== 'batch' || l.batchCostUsd === null) return { cost: l.costUsd, max: l.maxCostUsd };
  const discount = entry.price.batch_discount ?? 1;
  return { cost: l.batchCostUsd, max: (l.maxCostUsd - syncMaxCost) * discount + syncMaxCost };
}

function line(entry: ModelEntry, phase: string, price: Price, acc: Acc, role?: string): PlanLine {
  const usage = { input_tokens: acc.inputTokens, output_tokens: acc.outputTokens };
  // A price per request (a GPU model's prompt) counts once per item, not once for the summed usage:
  // the tokens are priced on the sums, the requests on the counts. Root items were reserved one by
  // one (acc.maxCost has their per-request part); the estimated ones are added here.
  const { per_request_usd: perRequest = 0, ...tokens } = price;
  const estimatedMax = acc.maxInputTokens > 0 || acc.maxOutputTokens > 0 ? maxCostUsd(tokens, acc.maxInputTokens, acc.maxOutputTokens) + acc.estimated * perRequest : 0;
  return {
    model: role ? `${entry.id} (${role})` : entry.id,
    phase,
    provider: entry.provider,
    items: acc.items,
    inputTokens: acc.inputTokens,
    outputTokens: acc.outputTokens,
    costUsd: costUsd(tokens, usage) + acc.items * perRequest,
    batchCostUsd: price.batch_discount !== undefined && entry.provider !== 'simulated' ? batchCost(price, usage, acc) : null,
    ...(acc.syncItems > 0 ? { syncItems: acc.syncItems } : {}),
    // Root items are reserved one by one at their bound (itemMaxCost). A dependent phase's prompts
    // hold replies that do not exist yet: its maximum is projected from their longest possible
    // length, and each call reserves its own bound when it is made.
    maxCostUsd: acc.maxCost + estimatedMax,
  };
}

/** The batch price of a line's usage, but for its synchronous share (Acc.sync…), at list price. */
function batchCost(price: Price, usage: { input_tokens: number; output_tokens: number }, acc: Acc): number {
  if (acc.syncItems === 0) return costUsd(price, usage, { batch: true });
  const sync = { input_tokens: Math.min(usage.input_tokens, acc.syncInputTokens), output_tokens: Math.min(usage.output_tokens, acc.syncOutputTokens) };
  const batched = { input_tokens: usage.input_tokens - sync.input_tokens, output_tokens: usage.output_tokens - sync.output_tokens };
  return costUsd(price, batched, { batch: true }) + costUsd(price, sync);
}

/** Items a plan counts for a phase, over every partition. */
export function plannedItems(plan: Plan, phase: string): number {
  return plan.partitions.reduce((s, p) => s + (p.items[phase] ?? 0), 0);
}

/** The plan as a fixed-width table for the terminal. */
export function formatPlan(plan: Plan): string {
  const usd = (x: number | null) => (x === null ? '—' : `$${x.toFixed(x < 1 ? 4 : 2)}`);
  const rows = [
    ['model', 'phase', 'provider', 'items', 'in tok', 'out tok', 'est. cost', 'batch API', 'max (reserved)'],
    ...plan.lines.map((l) => [
      l.model,
      l.phase,
      l.provider,
      String(l.items),
      String(l.inputTokens),
      String(l.outputTokens),
      usd(l.costUsd),
      usd(l.batchCostUsd),
      usd(l.maxCostUsd),
    ]),
    ['total', '', '', String(plan.totals.items), '', '', usd(plan.totals.costUsd), '', usd(plan.totals.maxCostUsd)],
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const text = rows.map((r) => r.map((cell, c) => (c >= 3 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ')).join('\n');
  const notes = plan.lines
    .filter((l) => (l.syncItems ?? 0) > 0)
    .map((l) => `\n${l.model} ${l.phase}: ${l.syncItems} item(s) fewer than a batch must hold (Bedrock: ${BEDROCK_BATCH_MIN_RECORDS} records per job) go through the synchronous API at list price; the batch API column counts them so`);
  return `${text}${notes.join('')}\nbudget: ${usd(plan.budgetUsd)} (hard cap; each call reserves its maximum before it is sent)`;
}
