/**
 * The truth behind a simulated judge: its false-negative and false-positive rates per strategy,
 * language and category, and the accuracies they imply on a set of pairs. The simulated replies
 * are drawn from exactly these rates (SimulatedXvalueJudge), so the analysis must recover them.
 *
 * Rate model: logit(r[s, l, c]) = logit(r[s]) + δ[l] + γ[c], for r = FNR and r = FPR alike; δ and
 * γ are the configured offsets, or N(0, spread²) draws keyed by the profile seed, language and
 * category (the same for every model sharing the profile seed).
 */
import { seedFromKey, uniformFromKey } from '../../../core/hash.js';
import { CATEGORIES, LANGUAGES, STRATEGIES } from '../types.js';
import type { Category, Language, QaPair, Strategy } from '../types.js';
import type { XvalueSimulation } from './simulationConfig.js';

export interface ErrorRates {
  readonly fnr: number;
  readonly fpr: number;
}

/** A standard normal draw determined by the key (Box–Muller over two keyed uniforms). */
export function normalFromKey(key: string): number {
  const u1 = Math.max(uniformFromKey(`${key}|u1`), 1e-12);
  const u2 = uniformFromKey(`${key}|u2`);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** The profile seed of a model: configured, or derived from its id. */
export function profileSeedOf(config: XvalueSimulation, modelId: string): number {
  return config.profile_seed ?? seedFromKey(`xvalue:${modelId}`);
}

export function languageOffset(config: XvalueSimulation, profileSeed: number, language: Language): number {
  return config.language_offsets?.[language] ?? config.language_spread * normalFromKey(`xvalue-profile|${profileSeed}|language|${language}`);
}

export function categoryOffset(config: XvalueSimulation, profileSeed: number, category: Category): number {
  return config.category_offsets?.[category] ?? config.category_spread * normalFromKey(`xvalue-profile|${profileSeed}|category|${category}`);
}

function shifted(p: number, offset: number): number {
  if (p <= 0 || p >= 1) return p;
  const z = Math.log(p / (1 - p)) + offset;
  return 1 / (1 + Math.exp(-z));
}

/**
 * The error rates of one strategy in one language and category.
 * @example trueRates(config, 7, 'defonly', 'zh', 'G&H') // { fnr: 0.47…, fpr: 0.08… }
 */
export function trueRates(config: XvalueSimulation, profileSeed: number, strategy: Strategy, language: Language, category: Category): ErrorRates {
  const base = config[strategy];
  const offset = languageOffset(config, profileSeed, language) + categoryOffset(config, profileSeed, category);
  return { fnr: shifted(base.fnr, offset), fpr: shifted(base.fpr, offset) };
}

/** Probability that the overall verdict on a pair is right (every reply readable). */
export function correctProbability(rates: ErrorRates, gold: 'Pass' | 'Fail'): number {
  return gold === 'Fail' ? 1 - rates.fnr : 1 - rates.fpr;
}

/** Expected accuracies of one group of pairs (every reply readable): the means of the per-pair probabilities. */
export interface ExpectedAccuracy {
  readonly n: number;
  readonly accuracy: number | null;
  readonly accuracy_negative: number | null;
  readonly accuracy_positive: number | null;
  /** Sum over the pairs of p(1 − p): the variance of the count of right verdicts. */
  readonly variance: number;
}

function expected(pairs: readonly QaPair[], rate: (p: QaPair) => ErrorRates): ExpectedAccuracy {
  let sum = 0;
  let variance = 0;
  let pos = 0;
  let posSum = 0;
  let neg = 0;
  let negSum = 0;
  for (const pair of pairs) {
    const p = correctProbability(rate(pair), pair.annotation.overall);
    sum += p;
    variance += p * (1 - p);
    if (pair.annotation.overall === 'Fail') {
      pos++;
      posSum += p;
    } else {
      neg++;
      negSum += p;
    }
  }
  return {
    n: pairs.length,
    accuracy: pairs.length > 0 ? sum / pairs.length : null,
    accuracy_negative: neg > 0 ? negSum / neg : null,
    accuracy_positive: pos > 0 ? posSum / pos : null,
    variance,
  };
}

/** What simulation_truth.json holds for one simulated model. */
export interface XvalueModelTruth {
  readonly model: string;
  readonly profile_seed: number;
  readonly rates: readonly ({ readonly strategy: Strategy; readonly language: Language; readonly category: Category } & ErrorRates)[];
  readonly expected: readonly ({ readonly strategy: Strategy; readonly group: 'overall' | 'language' | 'category'; readonly key: string } & ExpectedAccuracy)[];
}

/**
 * The true rates of a simulated model for the languages and categories of `pairs`, and the
 * accuracies they imply overall, per language and per category.
 * @example xvalueModelTruth('alpha', parseXvalueSimulation({}, where), pairs).expected[0].accuracy
 */
export function xvalueModelTruth(modelId: string, config: XvalueSimulation, pairs: readonly QaPair[]): XvalueModelTruth {
  const seed = profileSeedOf(config, modelId);
  const languages = LANGUAGES.filter((l) => pairs.some((p) => p.language === l));
  const categories = CATEGORIES.filter((c) => pairs.some((p) => p.category === c));
  const rates = STRATEGIES.flatMap((strategy) => languages.flatMap((language) => categories.map((category) => ({ strategy, language, category, ...trueRates(config, seed, strategy, language, category) }))));
  const exp: XvalueModelTruth['expected'][number][] = [];
  for (const strategy of STRATEGIES) {
    const rate = (p: QaPair) => trueRates(config, seed, strategy, p.language, p.category);
    exp.push({ strategy, group: 'overall', key: 'all', ...expected(pairs, rate) });
    for (const language of languages) exp.push({ strategy, group: 'language', key: language, ...expected(pairs.filter((p) => p.language === language), rate) });
    for (const category of categories) exp.push({ strategy, group: 'category', key: category, ...expected(pairs.filter((p) => p.category === category), rate) });
  }
  return { model: modelId, profile_seed: seed, rates, expected: exp };
}
