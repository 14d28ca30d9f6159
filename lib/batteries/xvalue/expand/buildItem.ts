import { stableId } from '../../../api/battery.js';
import type { ChatMessage } from '../../../api/battery.js';
import { renderPrompt } from '../prompts/renderPrompt.js';
import type { PhaseName, QaPair, XvalueFactors, XvalueItem } from '../types.js';
import type { ItemContext } from './types.js';

export const BATTERY = 'xvalue';

/**
 * One item. Its id hashes everything that defines the request — battery, campaign, phase, model,
 * language, factors, messages and settings — so a rerun finds the same ids, and a changed
 * template or setting makes new items without touching the replies of the old ones. X-Value has
 * no repeats, so the prompt key is the item id.
 */
export function buildItem(ctx: ItemContext, phase: PhaseName, pair: QaPair, factors: XvalueFactors, messages: readonly ChatMessage[], sourceItemId?: string): XvalueItem {
  const item_id = stableId({
    battery: BATTERY,
    campaign: ctx.campaign,
    phase,
    model: ctx.model,
    language: ctx.language,
    factors,
    messages,
    settings: ctx.settings,
  });
  return {
    item_id,
    prompt_key: item_id,
    campaign: ctx.campaign,
    phase,
    battery: BATTERY,
    model: ctx.model,
    language: ctx.language,
    factors,
    messages,
    settings: ctx.settings,
    extras: { gold: pair.annotation, answer: pair.answer },
    ...(sourceItemId === undefined ? {} : { source_item_id: sourceItemId }),
  };
}

/** The pairs of the partition's language, in data order. */
export function pairsOf(pairs: readonly QaPair[], ctx: ItemContext): QaPair[] {
  return pairs.filter((p) => p.language === ctx.language);
}

/**
 * One item per pair of the partition's language, the prompt filled with the pair alone: the
 * definition-only prompt and rubric step 1 are built alike and differ only in the prompt and the
 * strategy they belong to (steps 2 and 3 depend on earlier readings and are built apart).
 */
export function* onePerPair(ctx: ItemContext, pairs: readonly QaPair[], prompt: 'defonly' | 'step1'): Generator<XvalueItem> {
  const strategy = prompt === 'defonly' ? 'defonly' : 'rubric';
  for (const pair of pairsOf(pairs, ctx)) {
    const messages = renderPrompt(ctx.prompts, prompt, ctx.language, pair.category, { question: pair.question, answer: pair.answer });
    const factors: XvalueFactors = { qa_id: pair.id, category: pair.category, strategy, prompt_id: prompt, checkpoint: null, nature_used: null, scope_used: null };
    yield buildItem(ctx, prompt, pair, factors, messages);
  }
}
