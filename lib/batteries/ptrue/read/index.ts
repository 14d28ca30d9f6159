export { extractOption } from './options.js';
export type { ExtractedOption, OptionRule } from './options.js';
export { parseJudgeResult } from './judgeResult.js';
export type { JudgeVerdict } from './judgeResult.js';
export { prepareLanguageId, scriptLanguage, scriptCounts, UNDETERMINED } from './languageId.js';
export type { IdentifyLanguage, LanguageGuess, ScriptVerdict } from './languageId.js';
export { DEFAULT_LABELS, TOKENIZER_TABLES, tokenizerFor, probeCandidates } from './labels.js';
export type { ProbeCandidates } from './labels.js';
export { READERS, PTRUE_VOCABULARY, judgeReader, readOption, readLanguage, readGenerate, readVerify, readJudge } from './readers.js';
