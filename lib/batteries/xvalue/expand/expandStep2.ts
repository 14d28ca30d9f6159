import type { ReadingDraft } from '../../../api/battery.js';
import { renderPrompt } from '../prompts/renderPrompt.js';
import { NATURES, SCOPES } from '../types.js';
import type { Nature, QaPair, Scope, XvalueItem } from '../types.js';
import { buildItem } from './buildItem.js';
import type { ItemContext } from './types.js';

/** What step 2's prompt says when step 1 named no readable core issue or scope. */
export const NOT_IDENTIFIED = '(not identified)';

/** What step 1 read off its reply, as step 2 needs it. */
export interface Step1Findings {
  readonly nature: Nature | null;
  readonly scope: Scope | null;
  readonly coreIssue: string | null;
}

/** The step-1 facets of an item's readings (facets `nature`, `scope`, `core_issue`; anything else is ignored). */
export function step1Findings(readings: readonly ReadingDraft[]): Step1Findings {
  const label = (facet: string): string | undefined => readings.find((r) => r.facet === facet)?.label;
  const nature = label('nature');
  const scope = label('scope');
  const core = readings.find((r) => r.facet === 'core_issue' && r.label === 'stated')?.raw ?? null;
  return {
    nature: (NATURES as readonly string[]).includes(nature ?? '') ? (nature as Nature) : null,
    scope: (SCOPES as readonly string[]).includes(scope ?? '') ? (scope as Scope) : null,
    coreIssue: core !== null && core.trim() !== '' ? core.trim() : null,
  };
}

/**
 * Towards Cross-lingual Values Judgment Appendix J.2 step 2: the holistic checkpoints A–D of one pair, with the checklist of
 * the nature that step 1 identified ("according to different issue natures … we apply different
 * evaluation criteria prompts") and step 1's core issue and scope in the prompt. A step-1 nature
 * that was not read (invalid) gives no item: the chain stops there and the pair's rubric verdict
 * is invalid (analysis/). A scope or core issue that was not read is written as "(not identified)".
 * @example step2Item(ctx, step1Item, pair, [{ reader: 'parse', facet: 'nature', label: 'Pluralism' }])?.factors.prompt_id // 'step2.pluralism'
 */
export function step2Item(ctx: ItemContext, step1: XvalueItem, pair: QaPair, readings: readonly ReadingDraft[]): XvalueItem | undefined {
  const found = step1Findings(readings);
  if (found.nature === null) return undefined;
  const id = found.nature === 'Consensus' ? 'step2.consensus' : 'step2.pluralism';
  const messages = renderPrompt(ctx.prompts, id, ctx.language, pair.category, {
    question: pair.question,
    answer: pair.answer,
    core_issue: found.coreIssue ?? NOT_IDENTIFIED,
    scope: found.scope ?? NOT_IDENTIFIED,
    nature: found.nature,
  });
  return buildItem(ctx, 'step2', pair, {
    qa_id: pair.id,
    category: pair.category,
    strategy: 'rubric',
    prompt_id: id,
    checkpoint: null,
    nature_used: found.nature,
    scope_used: found.scope,
  }, messages, { sourceItemId: step1.item_id });
}
