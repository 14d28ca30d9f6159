/**
 * The truth behind a simulated judge: its false-negative and false-positive rates per strategy,
 * language and category, and the accuracies they imply on a set of pairs once a share of the
 * replies is unreadable. The simulated replies are drawn from exactly these rates
 * (SimulatedXvalueJudge), so the analysis must recover them.
 *
 * Rate model: logit(r[s, l, c]) = logit(r[s]) + δ[l] + γ[c], for r = FNR and r = FPR alike; δ and
 * γ are the configured offsets, or N(0, spread²) draws keyed by the profile seed, language and
 * category (the same for every model sharing the profile seed).
 */
import { mean, seedFromKey, uniformFromKey } from '../../../api/battery.js';
import { CATEGORIES, LANGUAGES, STRATEGIES, VETO_CHECKPOINTS, checkpointVerdict } from '../types.js';
import type { AnswerCheckpoint, Category, Language, QaPair, Strategy } from '../types.js';
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

/**
 * trueRates of one configuration and profile seed, each strategy, language and category computed
 * once: the simulator asks at every reply and the truth file for every pair, and each computation
 * draws four keyed normals (SHA-256 each), a sixth of the analysis at 100,000 pairs.
 */
export function ratesLookup(config: XvalueSimulation, profileSeed: number): (strategy: Strategy, language: Language, category: Category) => ErrorRates {
  const known = new Map<string, ErrorRates>();
  return (strategy, language, category) => {
    const key = `${strategy}|${language}|${category}`;
    let rates = known.get(key);
    if (rates === undefined) known.set(key, (rates = trueRates(config, profileSeed, strategy, language, category)));
    return rates;
  };
}

/** Probability that the overall verdict on a pair is right when every reply is readable. */
export function correctProbability(rates: ErrorRates, gold: 'Pass' | 'Fail'): number {
  return gold === 'Fail' ? 1 - rates.fnr : 1 - rates.fpr;
}

/**
 * The replies one pair's rubric verdict rests on: step 1 (its nature chooses step 2's
 * checklist), step 2 (A–D in one reply) and one step-3 reply per checkpoint E–H.
 */
export const RUBRIC_REPLIES = 6;

/** The probabilities of a pair's read verdict under a strategy: right, and invalid (an abstention). */
export interface VerdictProbabilities {
  readonly correct: number;
  readonly invalid: number;
}

/**
 * How many separate replies carry the checkpoints in `failing`: step 2 carries B–D together,
 * step 3 asks each of E–H in its own reply.
 */
function carriers(failing: readonly AnswerCheckpoint[]): number {
  const holistic = failing.some((c) => c === 'B' || c === 'C' || c === 'D') ? 1 : 0;
  return holistic + failing.filter((c) => c === 'E' || c === 'F' || c === 'G' || c === 'H').length;
}

/**
 * E[ι^k] over the checkpoints a rubric Fail names (SimulatedXvalueJudge.failing): each annotated
 * failure with probability `recall`, and when none is drawn one of them at random (one reply); on
 * a pair without annotated failures, one of B–H (one reply). ι^k is the chance that every reply carrying a named
 * failure is unreadable, so the veto sees no Fail.
 */
function allCarriersUnreadable(annotated: readonly AnswerCheckpoint[], recall: number, iota: number): number {
  if (annotated.length === 0) return iota;
  const m = annotated.length;
  let sum = Math.pow(1 - recall, m) * iota;
  for (let mask = 1; mask < 1 << m; mask++) {
    const chosen = annotated.filter((_, i) => (mask & (1 << i)) !== 0);
    sum += Math.pow(recall, chosen.length) * Math.pow(1 - recall, m - chosen.length) * Math.pow(iota, carriers(chosen));
  }
  return sum;
}

/**
 * The probabilities that the verdict the analysis reads off a pair's replies is right, and that it
 * is invalid, with a share ι = `invalid_rate` of every phase's replies unreadable — what the
 * simulator writes (SimulatedXvalueJudge.reply), not only what it decides. Def-only: one reply.
 * Rubric (README.md "Metrics", veto.ts): an unreadable step 1 stops the chain (invalid); a Fail
 * is read when step 1 and at least one reply carrying a named failure are readable; a Pass needs
 * all six replies readable; anything else is invalid.
 * @example verdictProbabilities({ fnr: 0.1, fpr: 0.3 }, pair, 'rubric', { invalid_rate: 0.05, checkpoint_recall: 0.7 }).correct
 */
export function verdictProbabilities(rates: ErrorRates, pair: QaPair, strategy: Strategy, config: Pick<XvalueSimulation, 'invalid_rate' | 'checkpoint_recall'>): VerdictProbabilities {
  const iota = config.invalid_rate;
  const gold = pair.annotation.overall;
  const decideFail = gold === 'Fail' ? 1 - rates.fnr : rates.fpr;
  if (strategy === 'defonly') return { correct: (1 - iota) * correctProbability(rates, gold), invalid: iota };
  const annotated = VETO_CHECKPOINTS.filter((c) => checkpointVerdict(pair.annotation, c) === 'Fail');
  const readPass = (1 - decideFail) * Math.pow(1 - iota, RUBRIC_REPLIES);
  const readFail = decideFail * (1 - iota) * (1 - allCarriersUnreadable(annotated, config.checkpoint_recall, iota));
  return { correct: gold === 'Fail' ? readFail : readPass, invalid: 1 - readPass - readFail };
}

/** Expected accuracies of one group of pairs, unreadable replies included: the means of the per-pair probabilities. */
export interface ExpectedAccuracy {
  readonly n: number;
  readonly accuracy: number | null;
  readonly accuracy_negative: number | null;
  readonly accuracy_positive: number | null;
  /** Expected share of invalid verdicts (abstentions, which count against accuracy). */
  readonly abstention: number | null;
  /** Sum over the pairs of p(1 − p): the variance of the count of right verdicts. */
  readonly variance: number;
}

// Means of probabilities, not rates of counted verdicts: the simulator's expected rates must not
// depend on how the analysis tallies observed verdicts (lib/metrics' confusionOf).
function expected(pairs: readonly QaPair[], probabilities: (p: QaPair) => VerdictProbabilities): ExpectedAccuracy {
  const all = pairs.map((pair) => ({ positive: pair.annotation.overall === 'Fail', ...probabilities(pair) }));
  const correct = (side: typeof all): number | null => mean(side.map((x) => x.correct));
  let variance = 0;
  for (const { correct: p } of all) variance += p * (1 - p);
  return {
    n: pairs.length,
    accuracy: correct(all),
    accuracy_negative: correct(all.filter((x) => !x.positive)),
    accuracy_positive: correct(all.filter((x) => x.positive)),
    abstention: mean(all.map((x) => x.invalid)),
    variance,
  };
}

/** What simulation_truth.json holds for one simulated model. */
export interface XvalueModelTruth {
  readonly model: string;
  readonly profile_seed: number;
  /** Share of every phase's replies written unreadable; `expected` counts their invalid verdicts. */
  readonly invalid_rate: number;
  /** The judge's decided verdicts: error rates before any reply is made unreadable. */
  readonly rates: readonly ({ readonly strategy: Strategy; readonly language: Language; readonly category: Category } & ErrorRates)[];
  readonly expected: readonly ({ readonly strategy: Strategy; readonly group: 'overall' | 'language' | 'category'; readonly key: string } & ExpectedAccuracy)[];
}

/**
 * The true rates of a simulated model for the languages and categories of `pairs`, and the
 * accuracies the analysis should find on the replies it writes (unreadable ones included),
 * overall, per language and per category.
 * @example xvalueModelTruth('alpha', parseXvalueSimulation({}, where), pairs).expected[0].accuracy
 */
export function xvalueModelTruth(modelId: string, config: XvalueSimulation, pairs: readonly QaPair[]): XvalueModelTruth {
  const seed = profileSeedOf(config, modelId);
  const ratesOf = ratesLookup(config, seed);
  const languages = LANGUAGES.filter((l) => pairs.some((p) => p.language === l));
  const categories = CATEGORIES.filter((c) => pairs.some((p) => p.category === c));
  const rates = STRATEGIES.flatMap((strategy) => languages.flatMap((language) => categories.map((category) => ({ strategy, language, category, ...trueRates(config, seed, strategy, language, category) }))));
  const exp: XvalueModelTruth['expected'][number][] = [];
  for (const strategy of STRATEGIES) {
    // Each pair's probabilities once, for the three groupings it is counted in.
    const known = new Map<QaPair, VerdictProbabilities>();
    const rate = (p: QaPair): VerdictProbabilities => {
      let probabilities = known.get(p);
      if (probabilities === undefined) known.set(p, (probabilities = verdictProbabilities(ratesOf(strategy, p.language, p.category), p, strategy, config)));
      return probabilities;
    };
    exp.push({ strategy, group: 'overall', key: 'all', ...expected(pairs, rate) });
    for (const language of languages) exp.push({ strategy, group: 'language', key: language, ...expected(pairs.filter((p) => p.language === language), rate) });
    for (const category of categories) exp.push({ strategy, group: 'category', key: category, ...expected(pairs.filter((p) => p.category === category), rate) });
  }
  return { model: modelId, profile_seed: seed, invalid_rate: config.invalid_rate, rates, expected: exp };
}
