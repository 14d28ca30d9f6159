export { parseByoRows, BYO_FIELDS, BYO_FORMAT } from './parseByoRows.js';
export { analyzeByoFile } from './analyzeByo.js';
