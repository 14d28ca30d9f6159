import { z } from 'zod';
import { LANGUAGES } from '../types.js';
import { parseSimulationBlock } from '../../../api/battery.js';

/**
 * Configuration of the simulated provider, as written under a campaign model's `simulation:` key
 * (respondent) or the judge's `simulation:` key. The campaign loader checks a block through the
 * simulator when the file is read; the provider applies the defaults below when a run builds it.
 */

const probability = z.number().min(0).max(1);
const languageKeys = z.enum(LANGUAGES);

/** A number for every language, or exact values for some languages (the others drawn as by default). */
function perLanguage<T extends z.ZodNumber>(value: T) {
  return z.union([value, z.partialRecord(languageKeys, value)]);
}

export const simulationConfigSchema = z
  .strictObject({
    /** Seeds the judgment profile; two models with the same profile_seed share it. Default: from the model id. */
    profile_seed: z.number().int().optional(),
    /** Model deviation from the story consensus, as an sd on the probability scale near π = ½. */
    profile_spread: z.number().min(0).max(2).default(0.25),
    /** The model's per-language deviation, same scale. */
    language_spread: z.number().min(0).max(2).default(0.05),
    /** β: mean yes/no keying bias of the model (negative prefers no); a map fixes single languages. */
    keying_bias: perLanguage(z.number().min(-1).max(1)).default(-0.1),
    /** λ: preference for the second-listed proposition letter (Same Judgment, Different Yes §6). */
    second_listed: perLanguage(z.number().min(-1).max(1)).default(0.05),
    /** ν: preference for the proposition holding the term the question names (Same Judgment, Different Yes §6). */
    named_term_pull: perLanguage(z.number().min(-1).max(1)).default(0.08),
    /**
     * m: probability that after a negative interrogative the particle follows the truth/agreement
     * mapping (yes confirms the negative). Default: drawn per language cell (Same Judgment, Different Yes §7).
     */
    negint_truth_mapping: perLanguage(probability).optional(),
    /** Share of replies that take both sides / make the answer conditional, or take no position. */
    undecided_rate: probability.default(0.05),
    /** Share of replies that refuse to judge. */
    refusal_rate: probability.default(0.01),
    /** Mean simulated latency per call in ms (exponential); 0 returns at once. */
    latency_ms: z.number().min(0).max(600_000).default(0),
    /** Share of calls that throw a transient (retryable) error, for retry tests. */
    error_rate: probability.default(0),
  })
  .refine((c) => c.undecided_rate + c.refusal_rate <= 1, {
    message: 'undecided_rate + refusal_rate must not exceed 1',
    path: ['undecided_rate'],
  });

/** What a campaign file may write under `simulation:` (every key optional). */
export type SimulationConfigInput = z.input<typeof simulationConfigSchema>;
/** The same after defaults. */
export type SimulationConfig = z.output<typeof simulationConfigSchema>;

export const simulatedJudgeConfigSchema = z.strictObject({
  /** Share of judgments replaced by a different label (Same Judgment, Different Yes "Sentence judging": ~3–5 % disagreement). */
  error_rate: probability.default(0.03),
  /** Mean simulated latency per call in ms (exponential). */
  latency_ms: z.number().min(0).max(600_000).default(0),
  /** Share of calls that throw a transient (retryable) error. */
  transient_error_rate: probability.default(0),
});

export type SimulatedJudgeConfigInput = z.input<typeof simulatedJudgeConfigSchema>;
export type SimulatedJudgeConfig = z.output<typeof simulatedJudgeConfigSchema>;

/** Where a `simulation:` block sits, for error messages: the campaign file and the path inside it. */
export interface ConfigLocation {
  readonly file: string;
  /** e.g. `models[alpha].simulation`. */
  readonly path: string;
}

/**
 * Validates a respondent's `simulation:` block and applies its defaults.
 * @example parseSimulationConfig({ keying_bias: { ja: -0.2 } }, { file: 'demo.yaml', path: 'models[alpha].simulation' })
 */
export function parseSimulationConfig(raw: unknown, where: ConfigLocation): SimulationConfig {
  return parseSimulationBlock(simulationConfigSchema, raw, where);
}

/** Validates a judge's `simulation:` block and applies its defaults. */
export function parseSimulatedJudgeConfig(raw: unknown, where: ConfigLocation): SimulatedJudgeConfig {
  return parseSimulationBlock(simulatedJudgeConfigSchema, raw, where);
}
