export { BATTERY, buildItem, pairsOf } from './buildItem.js';
export { expandDefOnly } from './expandDefOnly.js';
export { pairById } from './pairIndex.js';
export { expandStep1 } from './expandStep1.js';
export { NOT_IDENTIFIED, step1Findings, step2Item } from './expandStep2.js';
export type { Step1Findings } from './expandStep2.js';
export { expandStep3 } from './expandStep3.js';
export type { ItemContext } from './types.js';
