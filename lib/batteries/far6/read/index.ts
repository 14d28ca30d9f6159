export * from './types.js';
export * from './errors.js';
export * from './readerIds.js';
export { readOpening } from './readOpening.js';
export { readOpeningPlus, explainOpeningPlus } from './readOpeningPlus.js';
export { PLUS_TABLES, type PlusLanguageTable } from './plusTables.js';
export { JUDGE_SYSTEM_PROMPT, buildJudgeMessages, parseJudgeOutput, makeJudgeItem, needsJudge } from './judge.js';
export { fold } from './normalize.js';
