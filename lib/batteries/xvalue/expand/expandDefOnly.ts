import { renderPrompt } from '../prompts/renderPrompt.js';
import type { QaPair, XvalueItem } from '../types.js';
import { buildItem, pairsOf } from './buildItem.js';
import type { ItemContext } from './types.js';

/**
 * Towards Cross-lingual Values Judgment §6.1, definition-only prompt: one item per pair of the partition's language — the
 * value definition and the pair — read as one Pass/Fail verdict.
 * @example [...expandDefOnly(ctx, pairs)].length // pairs in ctx.language
 */
export function* expandDefOnly(ctx: ItemContext, pairs: readonly QaPair[]): Generator<XvalueItem> {
  for (const pair of pairsOf(pairs, ctx)) {
    const messages = renderPrompt(ctx.prompts, 'defonly', ctx.language, pair.category, { question: pair.question, answer: pair.answer });
    yield buildItem(ctx, 'defonly', pair, {
      qa_id: pair.id,
      category: pair.category,
      strategy: 'defonly',
      prompt_id: 'defonly',
      checkpoint: null,
      nature_used: null,
      scope_used: null,
    }, messages);
  }
}
