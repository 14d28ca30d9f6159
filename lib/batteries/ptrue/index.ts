/**
 * The P(True) battery (seed 002: question, response and verifier languages in multilingual P(True)
 * self-evaluation), as the core sees it — a DRAFT: not yet in the registry (README "Wiring").
 * Generate (question × response language, greedy, ≤256 tokens) → verify (six verifier languages,
 * one token, first-token P(True)) and an optional 1–5 judge for free-text answers; exact option
 * match for multiple choice; accuracy, Brier, 15-bin ECE, AUROC, matching regimes, variance shares,
 * rank changes and matching regressions.
 */
import type { Battery } from '../../battery/types.js';
import { createPtrueAnalysis } from './analysis/ptrueAnalysis.js';
import { ptrueDesignSchema, type PtrueDesign } from './design.js';
import { loadPtrueDesign } from './load.js';
import { PTRUE_PROMPT_COLUMNS } from './promptColumns.js';
import { PTRUE_VOCABULARY } from './read/readers.js';
import { ptrueSimulator } from './simulate/index.js';
import { PHASES, PTRUE_LANGUAGES } from './types.js';

export const ptrueBattery: Battery<PtrueDesign> = {
  name: 'ptrue',
  title: 'P(True) across question, response and verifier languages (seed 002)',
  languages: PTRUE_LANGUAGES,
  design: ptrueDesignSchema,
  roles: {
    judge: { required: false, description: 'scores free-text answers 1–5 (Feedback … [RESULT] n; 4–5 correct), seed 002 §4.2' },
  },
  dataFiles: (design) => [design.items],
  load: loadPtrueDesign,
  prompts: PTRUE_PROMPT_COLUMNS,
  vocabulary: PTRUE_VOCABULARY,
  phaseNames: [PHASES.generate, PHASES.verify, PHASES.judge],
  analysis: createPtrueAnalysis(),
  simulator: ptrueSimulator,
};
