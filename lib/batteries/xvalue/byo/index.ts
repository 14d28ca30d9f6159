export { BYO_COLUMNS, byoVerdictRowSchema } from './schema.js';
export type { ByoVerdictRow } from './schema.js';
export { byoToRows } from './byoRows.js';
export type { ByoResult, RawByoRow } from './byoRows.js';
export { findByoFiles, parseByoText, readByoFiles } from './loadByo.js';

/** One line on the format, for `--help` and `sondage batteries`. */
export const XVALUE_BYO_FORMAT =
  'verdicts as JSONL or CSV, one row per model × QA pair × strategy: model, qa_id, strategy (defonly|rubric), verdict (Pass|Fail|invalid), and for the rubric optionally scope, nature and checkpoints A–H; gold from the QA pairs file';
