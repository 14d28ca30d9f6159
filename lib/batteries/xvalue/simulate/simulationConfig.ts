/**
 * The `simulation:` block of a simulated model under test (README.md "Simulated judges"): the
 * judge's false-negative and false-positive rates per strategy, how they shift by language and
 * category, and how it answers the rubric's steps. Defaults follow the pattern of Towards Cross-lingual Values Judgment
 * Table 2: def-only errs towards Pass (Acc0 ≈ 93 %, Acc1 ≈ 58 %), the rubric towards Fail.
 */
import { z } from 'zod';
import { parseSimulationBlock } from '../../../api/battery.js';
import type { ConfigLocation } from '../../../api/battery.js';
import { CATEGORIES, LANGUAGES } from '../types.js';

const probability = z.number().min(0).max(1);

/** Error rates of one strategy on the overall verdict. */
const ratesSchema = z.strictObject({
  /** Share of values-inappropriate pairs judged Pass. */
  fnr: probability,
  /** Share of values-appropriate pairs judged Fail. */
  fpr: probability,
});

export const xvalueSimulationSchema = z.strictObject({
  /** Seeds the language and category offsets; models with the same profile_seed share them. Default: from the model id. */
  profile_seed: z.int().optional(),
  defonly: ratesSchema.default({ fnr: 0.42, fpr: 0.07 }),
  rubric: ratesSchema.default({ fnr: 0.15, fpr: 0.3 }),
  /**
   * SD of the per-language offset on the logit scale, drawn from profile_seed: a positive offset
   * raises both error rates in that language (a harder language). Same offsets for both strategies.
   */
  language_spread: z.number().min(0).max(3).default(0.35),
  /** SD of the per-category offset on the logit scale (a harder category). */
  category_spread: z.number().min(0).max(3).default(0.25),
  /** Exact logit offsets for some languages (the others drawn). */
  language_offsets: z.partialRecord(z.enum(LANGUAGES), z.number().min(-5).max(5)).optional(),
  /** Exact logit offsets for some categories (the others drawn). */
  category_offsets: z.partialRecord(z.enum(CATEGORIES), z.number().min(-5).max(5)).optional(),
  /** Step 1: probability of naming the annotated scope, and the annotated nature. */
  step1: z.strictObject({ scope: probability.default(0.85), nature: probability.default(0.8) }).default({ scope: 0.85, nature: 0.8 }),
  /** On an inappropriate pair judged Fail: the share of its failed checkpoints (B–H) the judge also fails. */
  checkpoint_recall: probability.default(0.7),
  /** Probability of giving checkpoint A's annotated label. */
  question_accuracy: probability.default(0.8),
  /** Share of replies that say nothing readable (read invalid). */
  invalid_rate: probability.default(0.01),
  /** JSON as the prompts ask, labelled lines in the pair's language, or either (drawn per item). */
  reply_style: z.enum(['json', 'lines', 'mixed']).default('mixed'),
  /** Mean simulated latency in ms (exponential). */
  latency_ms: z.number().min(0).max(600_000).default(0),
  /** Share of calls that fail with a transient (retried) error. */
  error_rate: probability.default(0),
});

export type XvalueSimulationInput = z.input<typeof xvalueSimulationSchema>;
export type XvalueSimulation = z.output<typeof xvalueSimulationSchema>;

/**
 * Validates a `simulation:` block and applies its defaults; a bad block is a CampaignFileError
 * naming the campaign file and the path inside it.
 * @example parseXvalueSimulation({ rubric: { fnr: 0.1, fpr: 0.4 } }, { file: 'demo.yaml', path: 'models[alpha].simulation' })
 */
export function parseXvalueSimulation(raw: unknown, where: ConfigLocation): XvalueSimulation {
  return parseSimulationBlock(xvalueSimulationSchema, raw, where);
}
