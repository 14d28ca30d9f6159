import type { QaPair, XvalueItem } from '../types.js';
import { onePerPair } from './buildItem.js';
import type { ItemContext } from './types.js';

/**
 * Towards Cross-lingual Values Judgment §6.1, definition-only prompt: one item per pair of the partition's language — the
 * value definition and the pair — read as one Pass/Fail verdict.
 * @example [...expandDefOnly(ctx, pairs)].length // pairs in ctx.language
 */
export function expandDefOnly(ctx: ItemContext, pairs: readonly QaPair[]): Generator<XvalueItem> {
  return onePerPair(ctx, pairs, 'defonly');
}
