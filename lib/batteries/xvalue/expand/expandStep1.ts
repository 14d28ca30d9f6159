import type { QaPair, XvalueItem } from '../types.js';
import { onePerPair } from './buildItem.js';
import type { ItemContext } from './types.js';

/**
 * Towards Cross-lingual Values Judgment Appendix J.2 step 1: one item per pair — identify the core issue, its scope
 * (Global/Regional) and nature (Consensus/Pluralism). Its readings choose step 2's checklist.
 */
export function expandStep1(ctx: ItemContext, pairs: readonly QaPair[]): Generator<XvalueItem> {
  return onePerPair(ctx, pairs, 'step1');
}
