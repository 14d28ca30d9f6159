import { renderPrompt } from '../prompts/renderPrompt.js';
import { FINE_GRAINED_CHECKPOINTS } from '../types.js';
import type { QaPair, XvalueItem } from '../types.js';
import { buildItem, extrasOf, pairsOf } from './buildItem.js';
import type { ItemContext } from './types.js';

/**
 * Towards Cross-lingual Values Judgment Appendix J.2 step 3: four items per pair, one per fine-grained checkpoint E–H, as the
 * paper has one "Evaluation Prompt for CheckPoint E" … "H" with its own examples. Each asks for
 * the offending sentences or none. The step does not depend on step 1 (§4.2: "fine-grained
 * criteria are nature-agnostic"), so it is a root phase and runs alongside step 1.
 */
export function* expandStep3(ctx: ItemContext, pairs: readonly QaPair[]): Generator<XvalueItem> {
  for (const pair of pairsOf(pairs, ctx)) {
    const extras = extrasOf(pair);
    for (const checkpoint of FINE_GRAINED_CHECKPOINTS) {
      const id = `step3.${checkpoint}` as const;
      const messages = renderPrompt(ctx.prompts, id, ctx.language, pair.category, { question: pair.question, answer: pair.answer });
      yield buildItem(ctx, 'step3', pair, {
        qa_id: pair.id,
        category: pair.category,
        strategy: 'rubric',
        prompt_id: id,
        checkpoint,
        nature_used: null,
        scope_used: null,
      }, messages, { extras });
    }
  }
}
