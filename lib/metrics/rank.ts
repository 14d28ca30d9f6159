/**
 * Rank agreement between two orderings of the same units (models), shared by batteries. Disentangling Question, Response, and Verifier Languages
 * App. E compares model rankings between language settings with Kendall's τ and against the spread
 * of τ between the all-English ranking and its own item-bootstrap resamples.
 *
 * The variant is τ-b (Kendall 1945): ties in either ranking are corrected for,
 * τ_b = (C − D) / √((n₀ − n₁)(n₀ − n₂)), n₀ = n(n−1)/2, n₁ and n₂ the pairs tied in x and in y.
 * Without ties it equals τ-a. Model scores tie (two models with the same accuracy on a small cell),
 * and τ-a would then shrink toward 0 for a reason that is not disagreement.
 */
import { seededRandom } from '../core/hash.js';
import { quantile } from './stats.js';

/**
 * Kendall's τ-b of paired values; null with fewer than two pairs or when either side is constant
 * (every pair tied: no ordering to compare). O(n²): rankings here have tens of units.
 * @example kendallTauB([1, 2, 3, 4], [1, 3, 2, 4]) // (5 − 1) / 6 = 0.667
 */
export function kendallTauB(x: readonly number[], y: readonly number[]): number | null {
  if (x.length !== y.length) throw new RangeError(`kendallTauB: ${x.length} x values but ${y.length} y values`);
  const n = x.length;
  if (n < 2) return null;
  let concordant = 0;
  let discordant = 0;
  let tiedX = 0;
  let tiedY = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const dx = Math.sign((x[i] as number) - (x[j] as number));
      const dy = Math.sign((y[i] as number) - (y[j] as number));
      if (dx === 0) tiedX++;
      if (dy === 0) tiedY++;
      if (dx !== 0 && dy !== 0) {
        if (dx === dy) concordant++;
        else discordant++;
      }
    }
  }
  const n0 = (n * (n - 1)) / 2;
  const denominator = Math.sqrt((n0 - tiedX) * (n0 - tiedY));
  if (denominator === 0) return null;
  return (concordant - discordant) / denominator;
}

/**
 * Ranks of scores, 1 = best, ties sharing their mean rank (a "fractional" ranking).
 * @example ranksOf([0.7, 0.9, 0.7], 'higher') // [2.5, 1, 2.5]
 */
export function ranksOf(scores: readonly number[], better: 'higher' | 'lower'): number[] {
  const order = scores.map((s, i) => ({ s: better === 'higher' ? -s : s, i })).sort((a, b) => a.s - b.s);
  const ranks = new Array<number>(scores.length);
  for (let k = 0; k < order.length; ) {
    let j = k;
    while (j + 1 < order.length && order[j + 1]!.s === order[k]!.s) j++;
    for (let m = k; m <= j; m++) ranks[order[m]!.i] = (k + j) / 2 + 1;
    k = j + 1;
  }
  return ranks;
}

/** Scores of the same units in two settings, by unit id. */
export type ScoresByUnit = ReadonlyMap<string, number>;

/** τ-b between two settings over the units both score (null when fewer than two in common). */
export function tauBetween(a: ScoresByUnit, b: ScoresByUnit): number | null {
  const common = [...a.keys()].filter((k) => b.has(k)).sort();
  return kendallTauB(
    common.map((k) => a.get(k) as number),
    common.map((k) => b.get(k) as number),
  );
}

/**
 * Pairs of units whose order flips between two settings: a > b in one and a < b in the other
 * (a tie in either is not a reversal). `eligible` narrows the pairs counted (App. E counts only
 * pairs "significantly ordered" in the first setting).
 */
export function orderReversals(
  from: ScoresByUnit,
  to: ScoresByUnit,
  eligible: (a: string, b: string) => boolean = () => true,
): { readonly pairs: number; readonly reversed: readonly (readonly [string, string])[] } {
  const units = [...from.keys()].filter((k) => to.has(k)).sort();
  let pairs = 0;
  const reversed: [string, string][] = [];
  for (let i = 0; i < units.length; i++) {
    for (let j = i + 1; j < units.length; j++) {
      const a = units[i] as string;
      const b = units[j] as string;
      if (!eligible(a, b)) continue;
      pairs++;
      const d1 = Math.sign((from.get(a) as number) - (from.get(b) as number));
      const d2 = Math.sign((to.get(a) as number) - (to.get(b) as number));
      if (d1 !== 0 && d2 !== 0 && d1 !== d2) reversed.push([a, b]);
    }
  }
  return { pairs, reversed };
}

/** Draw `n` indices of `0…size−1` with replacement (one bootstrap resample). */
export function resampleIndices(size: number, random: () => number): number[] {
  const out = new Array<number>(size);
  for (let i = 0; i < size; i++) out[i] = Math.floor(random() * size);
  return out;
}

/** The spread of τ between a reference ranking and its own bootstrap resamples. */
export interface BootstrapTauReference {
  readonly draws: number;
  /** τ-b of each resample with the full-sample scores (null draws, e.g. every model tied, dropped). */
  readonly taus: readonly number[];
  readonly mean: number | null;
  readonly median: number | null;
  /** 2.5 % and 97.5 % quantiles (type 7). */
  readonly lo: number | null;
  readonly hi: number | null;
}

/**
 * The bootstrap reference of App. E: resample the units of analysis (items) with replacement,
 * score every model on the resample, and take τ-b between that ranking and the full-sample one.
 * A ranking from another setting that sits below this spread departs from the reference more than
 * item sampling noise does. `score(sample)` gets the resampled item indices (0…items−1, repeats
 * kept) and returns each model's score; the stream is seeded, so a fixed seed gives fixed draws.
 */
export function bootstrapTauReference(
  items: number,
  score: (sample: readonly number[]) => ScoresByUnit,
  options: { readonly draws: number; readonly seed: number },
): BootstrapTauReference {
  const all = Array.from({ length: items }, (_, i) => i);
  const reference = score(all);
  const random = seededRandom(options.seed);
  const taus: number[] = [];
  for (let d = 0; d < options.draws; d++) {
    const tau = tauBetween(reference, score(resampleIndices(items, random)));
    if (tau !== null) taus.push(tau);
  }
  const mean = taus.length > 0 ? taus.reduce((s, t) => s + t, 0) / taus.length : null;
  return { draws: options.draws, taus, mean, median: quantile(taus, 0.5), lo: quantile(taus, 0.025), hi: quantile(taus, 0.975) };
}
