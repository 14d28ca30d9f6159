/**
 * P(True) (Disentangling Question, Response, and Verifier Languages, "Question, response and verifier languages in multilingual P(True)
 * self-evaluation"): generate (question × response language, greedy, ≤256 tokens) → verify (each
 * verifier language, one token, first-token P(True)) and an optional 1–5 judge for free-text
 * answers; exact option match for multiple choice; accuracy, Brier, 15-bin ECE, AUROC, matching
 * regimes, variance shares, rank changes and matching regressions. README.md beside this file
 * goes through the paper section by section.
 */
import { defineBattery } from '../../api/battery.js';
import { createPtrueAnalysis } from './analysis/ptrueAnalysis.js';
import { ptrueByo } from './byoSpec.js';
import { ptrueDesignSchema, type PtrueDesign } from './design.js';
import { loadPtrueDesign } from './load.js';
import { PTRUE_PROMPT_COLUMNS } from './promptColumns.js';
import { PTRUE_VOCABULARY } from './read/readers.js';
import { ptrueSimulator } from './simulate/index.js';
import { PHASES, PTRUE_LANGUAGES } from './types.js';
import { ptrueView } from './view.js';

export const ptrue = defineBattery<PtrueDesign>({
  name: 'ptrue',
  title: 'P(True) from "Disentangling Question, Response, and Verifier Languages in Multilingual P(True) Self-Evaluation"',
  languages: PTRUE_LANGUAGES,
  design: ptrueDesignSchema,
  roles: {
    judge: { required: false, description: 'scores free-text answers 1–5 (Feedback … [RESULT] n; 4–5 correct), §4.2' },
  },
  dataFiles: (design) => [{ field: 'design.items', file: design.items }],
  load: loadPtrueDesign,
  prompts: PTRUE_PROMPT_COLUMNS,
  vocabulary: PTRUE_VOCABULARY,
  phaseCatalog: [
    { name: PHASES.generate, answeredBy: 'subject', after: [], readers: ['option', 'language'], description: 'question × response language, greedy, ≤256 tokens (§3.4); exact option match (§4.1) and the realised language' },
    { name: PHASES.verify, answeredBy: 'subject', after: [PHASES.generate], readers: ['ptrue'], description: 'each reply asked back in every verifier language, one token: first-token P(True) (§3.5, App. A)' },
    { name: PHASES.judge, answeredBy: { role: 'judge' }, after: [PHASES.generate], readers: ['judge:*'], description: 'free-text answers scored 1–5, 4–5 correct (§4.2)', optional: true },
  ],
  analysis: createPtrueAnalysis(),
  simulator: ptrueSimulator,
  byo: ptrueByo,
  view: ptrueView,
});
