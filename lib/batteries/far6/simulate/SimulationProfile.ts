import { seedFromKey, uniformFromKey } from '../../../api/battery.js';
import type { Language, StoryGroup } from '../types.js';
import type { SimulationConfig } from './simulationConfig.js';
import type { CellHabits } from './types.js';

/**
 * The true parameters of one simulated model: story judgments π per language and story, and the
 * answer habits of each model × language cell. Generator and `simulationTruth` both read them
 * from here, so what is exported as truth is what the replies were drawn from.
 *
 * Every draw is keyed (a hash of the campaign seed, the model or profile seed, the language and
 * the story), never taken from a stream, so a parameter does not depend on which other stories,
 * languages or models a campaign holds, nor on call order. Results are cached per instance.
 */

/** Story consensus on the logit scale by story group (Same Judgment, Different Yes §5: violations high, acceptable low). */
export const GROUP_LOGIT: Readonly<Record<StoryGroup, number>> = { acceptable: -2.2, contested: 0, violation: 2.2 };
/** sd of the story-specific consensus shift (logit), keyed by campaign seed + story. */
export const STORY_SHIFT_SD = 0.8;
/** Spreads are given on the probability scale near π = ½, where dπ/dlogit = ¼. */
export const SPREAD_TO_LOGIT = 4;
/** π is kept off 0 and 1 so that every story stays informative. */
export const PI_MIN = 0.03;
export const PI_MAX = 0.97;
/** sd of a cell's keying bias around the model mean (Same Judgment, Different Yes §6: the magnitude belongs to the cell). */
export const KEYING_BIAS_SD = 0.06;
/** sd of a cell's second-listed preference and named-term pull around the model mean. */
export const LABEL_HABIT_SD = 0.02;
/** Default negative-interrogative mapping: about a third of cells truth-based (Same Judgment, Different Yes §7). */
export const TRUTH_CELL_SHARE = 1 / 3;

/** The generator's clamp of a choice probability; `simulationTruth` must use this same one. */
export function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

function logistic(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** A standard normal determined by the key (Box–Muller on two keyed uniforms). */
export function normalFromKey(key: string): number {
  const u1 = 1 - uniformFromKey(`${key}#1`); // (0, 1]: log is finite
  const u2 = uniformFromKey(`${key}#2`);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** The profile seed a model gets when its config names none. */
export function defaultProfileSeed(modelId: string): number {
  return seedFromKey(`sim:profile-seed:${modelId}`);
}

type PerLanguage = number | Partial<Record<Language, number>>;

export class SimulationProfile {
  readonly profileSeed: number;
  private readonly piCache = new Map<string, number>();
  private readonly habitCache = new Map<Language, CellHabits>();

  constructor(
    readonly seed: number,
    readonly modelId: string,
    readonly config: SimulationConfig,
  ) {
    this.profileSeed = config.profile_seed ?? defaultProfileSeed(modelId);
  }

  /**
   * π(model, language, story): probability of asserting the reference proposition P.
   * logit π = group consensus + story shift (campaign seed) + model deviation (profile seed)
   * + language deviation (profile seed × language), clamped to [PI_MIN, PI_MAX].
   */
  pi(language: Language, story: string, group: StoryGroup): number {
    const key = `${language}\u0000${story}\u0000${group}`;
    let value = this.piCache.get(key);
    if (value === undefined) {
      const consensus = GROUP_LOGIT[group] + STORY_SHIFT_SD * normalFromKey(`sim:${this.seed}:story:${story}`);
      const model = SPREAD_TO_LOGIT * this.config.profile_spread * normalFromKey(`sim:profile:${this.profileSeed}:story:${story}`);
      const lang =
        SPREAD_TO_LOGIT * this.config.language_spread * normalFromKey(`sim:profile:${this.profileSeed}:${language}:story:${story}`);
      value = Math.min(PI_MAX, Math.max(PI_MIN, logistic(consensus + model + lang)));
      this.piCache.set(key, value);
    }
    return value;
  }

  /** The answer habits of this model in one language (one cell). */
  habits(language: Language): CellHabits {
    let cell = this.habitCache.get(language);
    if (cell === undefined) {
      const c = this.config;
      cell = {
        keying_bias: this.drawAround(language, 'keying_bias', c.keying_bias, -0.1, KEYING_BIAS_SD),
        second_listed: this.drawAround(language, 'second_listed', c.second_listed, 0.05, LABEL_HABIT_SD),
        named_term_pull: this.drawAround(language, 'named_term_pull', c.named_term_pull, 0.08, LABEL_HABIT_SD),
        negint_truth_mapping: this.truthMapping(language),
        undecided_rate: c.undecided_rate,
        refusal_rate: c.refusal_rate,
      };
      this.habitCache.set(language, cell);
    }
    return cell;
  }

  /** A number is the model mean, each language drawn around it; a map fixes the languages it names. */
  private drawAround(language: Language, name: string, value: PerLanguage, fallbackMean: number, sd: number): number {
    const exact = typeof value === 'number' ? undefined : value[language];
    if (exact !== undefined) return exact;
    const mean = typeof value === 'number' ? value : fallbackMean;
    return mean + sd * normalFromKey(`sim:${this.seed}:${this.modelId}:${language}:${name}`);
  }

  private truthMapping(language: Language): number {
    const value = this.config.negint_truth_mapping;
    if (typeof value === 'number') return value;
    const exact = value?.[language];
    if (exact !== undefined) return exact;
    const key = `sim:${this.seed}:${this.modelId}:${language}:negint_truth_mapping`;
    const truthCell = uniformFromKey(`${key}:system`) < TRUTH_CELL_SHARE;
    const u = uniformFromKey(`${key}:share`);
    // Truth-based cells in [0.80, 0.98], polarity-based in [0.02, 0.20].
    return truthCell ? 0.8 + 0.18 * u : 0.02 + 0.18 * u;
  }
}
