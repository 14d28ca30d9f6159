export { checkByoRows, completeReplies, parseByoRows, BYO_FIELDS, BYO_FORMAT } from './parseByoRows.js';
export { analyzeByoFile, readByoFile } from './analyzeByo.js';
