/**
 * The phase graph of X-Value (DESIGN.md: "def-only, step 1, step 3 as roots; step 2 after step 1
 * (its checklist chosen by step 1's nature)"), as PhaseSpecs of the battery contract. Every phase
 * is answered by the model under test; every reply is read by `parse` (read/).
 */
import { estimatePromptTokens } from '../../api/battery.js';
import type { GenerationSettings, PartitionContext, PhaseEstimate, PhaseSpec, Upstream } from '../../api/battery.js';
import { expandDefOnly, expandStep1, expandStep3, pairById, pairsOf, step2Item } from './expand/index.js';
import type { ItemContext } from './expand/index.js';
import { renderPrompt } from './prompts/renderPrompt.js';
import type { PromptSet } from './prompts/types.js';
import { PARSE_READER, readXvalueReply } from './read/index.js';
import type { Language, PhaseName, QaPair, Strategy, XvalueItem } from './types.js';

/** What the phases are built from: the loaded design. */
export interface XvaluePhaseArgs {
  readonly pairs: readonly QaPair[];
  readonly prompts: PromptSet;
  readonly strategies: readonly Strategy[];
}

/**
 * Phase settings (below campaign and model settings): room for a JSON verdict with a short
 * reason. The paper gives no generation settings; campaigns set temperature and raise max_tokens
 * for reasoning models.
 */
export const PHASE_SETTINGS: Readonly<Record<PhaseName, GenerationSettings>> = {
  defonly: { max_tokens: 256 },
  step1: { max_tokens: 256 },
  step2: { max_tokens: 512 },
  step3: { max_tokens: 512 },
};

/** Expected reply lengths for the cost estimate (a JSON object with a short reason or a few sentences). */
export const EXPECTED_OUTPUT_TOKENS: Readonly<Record<PhaseName, number>> = { defonly: 40, step1: 50, step2: 120, step3: 60 };

/** The longest core issue the step-2 reservation allows for (step 1 is asked for "one short phrase"). */
const MAX_CORE_ISSUE = 'x'.repeat(400);

function itemContext(p: PartitionContext, prompts: PromptSet): ItemContext {
  return { campaign: p.campaign.name, model: p.answerer.id, language: p.language as Language, settings: p.answerer.settings, prompts, ...(p.planning ? { planning: true } : {}) };
}

function read(item: Parameters<PhaseSpec['read']>[0], reply: Parameters<PhaseSpec['read']>[1]) {
  return readXvalueReply(item as XvalueItem, reply);
}

/** A phase asked of every pair in the partition's language, after nothing: def-only, step 1, step 3. */
function rootPhase(name: 'defonly' | 'step1' | 'step3', args: XvaluePhaseArgs, expand: (ctx: ItemContext, pairs: readonly QaPair[]) => Generator<XvalueItem>): PhaseSpec {
  return {
    name,
    after: [],
    answeredBy: 'subject',
    settings: PHASE_SETTINGS[name],
    expand: (p) => expand(itemContext(p, args.prompts), args.pairs),
    read,
    expectedOutputTokens: () => EXPECTED_OUTPUT_TOKENS[name],
  };
}

/** §6.1 definition-only: a root phase. */
export function defonlyPhase(args: XvaluePhaseArgs): PhaseSpec {
  return rootPhase('defonly', args, expandDefOnly);
}

/** Appendix J.2 step 1: a root phase. */
export function step1Phase(args: XvaluePhaseArgs): PhaseSpec {
  return rootPhase('step1', args, expandStep1);
}

/** Appendix J.2 step 3: a root phase (nature-agnostic, it does not wait for step 1). */
export function step3Phase(args: XvaluePhaseArgs): PhaseSpec {
  return rootPhase('step3', args, expandStep3);
}

/**
 * The step-2 items of a partition from step 1's replies and readings: one per step-1 item with a
 * reply whose nature was read; none for a nature read invalid (the rubric verdict is then invalid).
 */
export function* expandStep2(p: PartitionContext, up: Upstream, args: XvaluePhaseArgs): Generator<XvalueItem> {
  const ctx = itemContext(p, args.prompts);
  for (const source of p.items('step1') as readonly XvalueItem[]) {
    if (up.reply('step1', source.item_id) === undefined) continue;
    const pair = pairById(args.pairs, source.factors.qa_id);
    if (pair === undefined) throw new Error(`step1 item ${source.item_id} names pair ${source.factors.qa_id}, which the design does not hold`);
    const readings = up.readings('step1', source.item_id).filter((r) => r.reader === PARSE_READER);
    const item = step2Item(ctx, source, pair, readings);
    if (item) yield item;
  }
}

/**
 * Step 2's counts and tokens before step 1 has replied: at most one item per pair, each priced
 * with the longer of the two checklists; the reservation allows a long core issue.
 */
export function estimateStep2(p: PartitionContext, args: XvaluePhaseArgs): PhaseEstimate {
  const ctx = itemContext(p, args.prompts);
  let inputTokens = 0;
  let maxInputTokens = 0;
  const pairs = pairsOf(args.pairs, ctx);
  for (const pair of pairs) {
    inputTokens += step2Tokens(args.prompts, ctx.language, pair, pair.annotation.core_issue);
    maxInputTokens += step2Tokens(args.prompts, ctx.language, pair, MAX_CORE_ISSUE);
  }
  const maxTokens = ctx.settings.max_tokens ?? PHASE_SETTINGS.step2.max_tokens ?? 512;
  return {
    items: pairs.length,
    inputTokens,
    outputTokens: pairs.length * EXPECTED_OUTPUT_TOKENS.step2,
    maxInputTokens,
    maxOutputTokens: pairs.length * maxTokens,
  };
}

const STEP2_PROMPTS = ['step2.consensus', 'step2.pluralism'] as const;

/**
 * The estimated input tokens of a pair's step-2 prompt with core issue `core`: the longer of the two checklists'.
 * A loop, not closures per pair (renderPrompt says why).
 */
function step2Tokens(prompts: PromptSet, language: Language, pair: QaPair, core: string): number {
  const vars = { question: pair.question, answer: pair.answer, core_issue: core, scope: 'Regional', nature: 'Consensus' } as const;
  let most = 0;
  for (const id of STEP2_PROMPTS) most = Math.max(most, estimatePromptTokens(renderPrompt(prompts, id, language, pair.category, vars), language));
  return most;
}

/** Appendix J.2 step 2: after step 1 (its reply and its parse readings). */
export function step2Phase(args: XvaluePhaseArgs): PhaseSpec {
  return {
    name: 'step2',
    after: [{ phase: 'step1', take: ['reply', 'readings'], readers: [PARSE_READER] }],
    answeredBy: 'subject',
    settings: PHASE_SETTINGS.step2,
    expand: (p, up) => expandStep2(p, up, args),
    read,
    estimate: (p) => estimateStep2(p, args),
  };
}

/**
 * The enabled phases, each after the phases it consumes: def-only for the definition-only
 * strategy; step 1, step 3 and step 2 for the rubric.
 * @example xvaluePhases({ pairs, prompts: DEFAULT_PROMPT_SET, strategies: ['defonly', 'rubric'] }).map((p) => p.name) // ['defonly', 'step1', 'step3', 'step2']
 */
export function xvaluePhases(args: XvaluePhaseArgs): PhaseSpec[] {
  const out: PhaseSpec[] = [];
  if (args.strategies.includes('defonly')) out.push(defonlyPhase(args));
  if (args.strategies.includes('rubric')) out.push(step1Phase(args), step3Phase(args), step2Phase(args));
  return out;
}
