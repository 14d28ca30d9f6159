import type { LoadedBattery } from '../design/battery.js';
import type { Campaign, ModelEntry } from '../design/campaign.js';
import type { PromptItem } from '../core/types.js';
import type { AnswerConstraint } from '../batteries/far6/types.js';
import { costUsd, estimatePromptTokens, maxCostUsd } from '../pricing/pricing.js';
import type { Price } from '../providers/types.js';
import { auditPhases } from './auditPhase.js';

/**
 * Typical reply lengths in tokens, used for the expected cost only (reservations always use
 * max_tokens): one sentence is ~25–45 tokens in every language of the battery, a letter ~2.
 */
export const EXPECTED_OUTPUT_TOKENS: Record<AnswerConstraint, number> = { free: 45, verdict: 45, yesno: 45, label: 3 };
/** The judge's instructions and codebook around the source prompt and reply, and its short answer. */
export const JUDGE_PROMPT_OVERHEAD_TOKENS = 320;
export const JUDGE_OUTPUT_TOKENS = 40;

export interface PlanLine {
  readonly model: string;
  readonly phase: string;
  readonly provider: string;
  readonly items: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Expected cost at list price. */
  readonly costUsd: number;
  /** What the provider's batch API would charge, where it has one. */
  readonly batchCostUsd: number | null;
  /** Sum of per-call reservations: prompt + max_tokens at list price (the budget's worst case). */
  readonly maxCostUsd: number;
}

export interface Plan {
  readonly campaign: string;
  readonly battery: string;
  readonly budgetUsd: number;
  readonly lines: readonly PlanLine[];
  readonly totals: { readonly items: number; readonly costUsd: number; readonly maxCostUsd: number };
  readonly partitions: readonly {
    readonly model: string;
    readonly language: string;
    readonly items: number;
    readonly judged: number;
    /** Judge audit (seed 000 "Sentence judging"): the sample drawn here, read once per audit phase. */
    readonly audited?: number;
  }[];
}

interface Acc {
  items: number;
  inputTokens: number;
  outputTokens: number;
  maxCost: number;
}

const emptyAcc = (): Acc => ({ items: 0, inputTokens: 0, outputTokens: 0, maxCost: 0 });

/** Input tokens of an item's messages by the documented per-script estimate, chat overhead included. */
export function itemInputTokens(item: PromptItem): number {
  return estimatePromptTokens(item.messages, item.language);
}

/**
 * Per-call reservation for an item under a price: prompt tokens + max_tokens at list price. With
 * vLLM's `prompt_logprobs` candidate method a call is the reply plus one scoring request per
 * candidate (the prompt again, one token out), all paid: the reservation covers them too.
 */
export function itemMaxCost(item: PromptItem, price: Price): number {
  const input = itemInputTokens(item);
  const reply = maxCostUsd(price, input, item.settings.max_tokens ?? 1024);
  const scoring = item.settings.candidate_logprobs?.method === 'prompt_logprobs' ? Object.keys(item.settings.candidate_logprobs.tokens).length : 0;
  return reply + scoring * maxCostUsd(price, input + 1, 1);
}

/**
 * Counts every item of every phase and prices it, without calling anything. Streams the
 * expansion one model and language at a time, so a million-item plan holds one partition.
 */
export function planCampaign(campaign: Campaign, battery: LoadedBattery): Plan {
  const judge = campaign.judge;
  const judgePrice = judge?.price;
  const judgeMax = judge?.settings.max_tokens ?? 256;
  const lines: PlanLine[] = [];
  const partitions: { model: string; language: string; items: number; judged: number; audited?: number }[] = [];
  const audits = auditPhases(campaign);
  const perStratum = judge?.audit?.per_stratum ?? 0;
  const charged: { cost: number; max: number }[] = [];
  for (const model of campaign.models) {
    const price = model.price;
    const gen = emptyAcc();
    const jud = emptyAcc();
    // Per audit phase: the expected share of each stratum's judge items, at that phase's judge price.
    const aud = audits.map(() => emptyAcc());
    for (const language of battery.languages) {
      let items = 0;
      let judged = 0;
      const strata = new Map<AnswerConstraint, { n: number; input: number; reserveInput: number }>();
      for (const item of battery.expand(model, language)) {
        const input = itemInputTokens(item);
        const output = Math.min(item.settings.max_tokens ?? Infinity, EXPECTED_OUTPUT_TOKENS[item.factors['constraint'] as AnswerConstraint]);
        gen.items++;
        gen.inputTokens += input;
        gen.outputTokens += output;
        gen.maxCost += maxCostUsd(price, input, item.settings.max_tokens ?? 1024);
        items++;
        if (judge && judgePrice && battery.needsJudge(item)) {
          const jin = input + output + JUDGE_PROMPT_OVERHEAD_TOKENS;
          jud.items++;
          jud.inputTokens += jin;
          jud.outputTokens += JUDGE_OUTPUT_TOKENS;
          jud.maxCost += maxCostUsd(judgePrice, jin + (item.settings.max_tokens ?? 1024) - output, judgeMax);
          judged++;
          if (audits.length > 0) {
            const st = strata.get(item.factors['constraint'] as AnswerConstraint) ?? { n: 0, input: 0, reserveInput: 0 };
            st.n++;
            st.input += jin;
            st.reserveInput += jin + (item.settings.max_tokens ?? 1024) - output;
            strata.set(item.factors['constraint'] as AnswerConstraint, st);
          }
        }
      }
      // Within a partition the audit's strata are the answer constraints: min(per_stratum, judged)
      // each, at the stratum's mean judge prompt (every judged reply is assumed to get a reading).
      let audited = 0;
      for (const st of strata.values()) {
        const take = Math.min(perStratum, st.n);
        audited += take;
        audits.forEach((a, i) => {
          const acc = aud[i] as Acc;
          const input = Math.round((st.input * take) / st.n);
          acc.items += take;
          acc.inputTokens += input;
          acc.outputTokens += JUDGE_OUTPUT_TOKENS * take;
          acc.maxCost += maxCostUsd(a.judge.price, Math.round((st.reserveInput * take) / st.n), (a.judge.settings.max_tokens ?? 256) * take);
        });
      }
      partitions.push({ model: model.id, language, items, judged, ...(audits.length > 0 ? { audited } : {}) });
    }
    lines.push(line(model, 'generate', price, gen));
    charged.push(chargedCost(model, lines.at(-1)!));
    if (judge && judgePrice) {
      lines.push(line(judge, 'judge', judgePrice, jud, `judging ${model.id}`));
      charged.push(chargedCost(judge, lines.at(-1)!));
    }
    audits.forEach((a, i) => {
      lines.push(line(a.judge, a.phase, a.judge.price, aud[i] as Acc, `auditing ${model.id}`));
      charged.push(chargedCost(a.judge, lines.at(-1)!));
    });
  }
  const totals = {
    items: lines.reduce((s, l) => s + l.items, 0),
    costUsd: charged.reduce((s, c) => s + c.cost, 0),
    maxCostUsd: charged.reduce((s, c) => s + c.max, 0),
  };
  return { campaign: campaign.name, battery: battery.name, budgetUsd: campaign.budget_usd, lines, totals, partitions };
}

/** What the run will charge for a line: `mode: batch` runs (and reserves) at the batch price. */
function chargedCost(entry: ModelEntry, l: PlanLine): { cost: number; max: number } {
  if (entry.mode !== 'batch' || l.batchCostUsd === null) return { cost: l.costUsd, max: l.maxCostUsd };
  return { cost: l.batchCostUsd, max: l.maxCostUsd * (entry.price.batch_discount ?? 1) };
}

function line(entry: ModelEntry, phase: string, price: Price, acc: Acc, role?: string): PlanLine {
  const usage = { input_tokens: acc.inputTokens, output_tokens: acc.outputTokens };
  return {
    model: role ? `${entry.id} (${role})` : entry.id,
    phase,
    provider: entry.provider,
    items: acc.items,
    inputTokens: acc.inputTokens,
    outputTokens: acc.outputTokens,
    costUsd: costUsd(price, usage),
    batchCostUsd: price.batch_discount !== undefined && entry.provider !== 'simulated' ? costUsd(price, usage, { batch: true }) : null,
    maxCostUsd: acc.maxCost,
  };
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
  return `${text}\nbudget: ${usd(plan.budgetUsd)} (hard cap; each call reserves its maximum before it is sent)`;
}
