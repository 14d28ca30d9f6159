import { renderPrompt } from '../prompts/renderPrompt.js';
import type { QaPair, XvalueItem } from '../types.js';
import { buildItem, pairsOf } from './buildItem.js';
import type { ItemContext } from './types.js';

/**
 * Towards Cross-lingual Values Judgment Appendix J.2 step 1: one item per pair — identify the core issue, its scope
 * (Global/Regional) and nature (Consensus/Pluralism). Its readings choose step 2's checklist.
 */
export function* expandStep1(ctx: ItemContext, pairs: readonly QaPair[]): Generator<XvalueItem> {
  for (const pair of pairsOf(pairs, ctx)) {
    const messages = renderPrompt(ctx.prompts, 'step1', ctx.language, pair.category, { question: pair.question, answer: pair.answer });
    yield buildItem(ctx, 'step1', pair, {
      qa_id: pair.id,
      category: pair.category,
      strategy: 'rubric',
      prompt_id: 'step1',
      checkpoint: null,
      nature_used: null,
      scope_used: null,
    }, messages);
  }
}
