import { stableId } from '../../../api/battery.js';
import type { ChatMessage } from '../../../api/battery.js';
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
