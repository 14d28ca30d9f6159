export { firstTokenProbability, readFirstTokenProbability, FIRST_TOKEN_LABELS } from './firstTokenProbability.js';
export type { FirstTokenProbability, FirstTokenReadingOptions, LabelCandidates, ProbabilityBound } from './firstTokenProbability.js';
