/**
 * Confidence metrics over (confidence, correct) pairs, shared by batteries (DESIGN.md "Batteries":
 * Brier, ECE and AUROC live once, below the batteries). P(True) (Disentangling Question, Response, and Verifier Languages §5) scores a first-token
 * P(True) against the correctness of the reply it judges; any probability of "correct" fits.
 *
 * Conventions, each chosen once here:
 * - Empty input: every metric is null (nothing to score), never 0.
 * - A confidence outside [0, 1] or not finite, or an outcome other than 0/1, is a programming
 *   mistake upstream (a reader stores P(True) in [0, 1]) and throws RangeError.
 */

/** One scored answer: the confidence that it is correct, and whether it is. */
export interface ScoredOutcome {
  /** Confidence in [0, 1] (P(True)). */
  readonly p: number;
  /** 1 (or true) when the answer was correct. */
  readonly y: number | boolean;
}

function outcome(y: number | boolean, i: number): 0 | 1 {
  if (y === true || y === 1) return 1;
  if (y === false || y === 0) return 0;
  throw new RangeError(`calibration: outcome ${i} is ${String(y)}; expected 0, 1, true or false`);
}

function confidence(p: number, i: number): number {
  if (!(Number.isFinite(p) && p >= 0 && p <= 1)) throw new RangeError(`calibration: confidence ${i} is ${p}; expected a number in [0, 1]`);
  return p;
}

/**
 * Brier score: the mean squared difference between confidence and outcome (Brier 1950), in [0, 1],
 * lower is better; null for no pairs.
 * @example brierScore([{ p: 0.8, y: 1 }, { p: 0.3, y: 0 }]) // (0.04 + 0.09) / 2 = 0.065
 */
export function brierScore(pairs: readonly ScoredOutcome[]): number | null {
  if (pairs.length === 0) return null;
  let sum = 0;
  pairs.forEach((s, i) => {
    const d = confidence(s.p, i) - outcome(s.y, i);
    sum += d * d;
  });
  return sum / pairs.length;
}

/** The ECE of Disentangling Question, Response, and Verifier Languages §5: 15 equal-width bins. */
export const ECE_BINS = 15;

/**
 * The bin of a confidence among `bins` equal-width bins, 0-based. Bins are right-closed,
 * B_m = ((m−1)/M, m/M] for m = 1…M, with a confidence of exactly 0 put in the first bin: the
 * convention of Guo, Pleiss, Sun & Weinberger, "On Calibration of Modern Neural Networks" (ICML
 * 2017, §2, I_m = ((m−1)/M, m/M]), after Naeini, Cooper & Hauskrecht (AAAI 2015). So 1/15 falls in
 * the first bin, and 1 in the last. Edges are compared as the doubles m/M, not via ⌈p·M⌉, whose
 * rounding (0.2 × 15 = 3.0000000000000004) would move a value that sits on an edge up a bin.
 * @example binIndex(0, 15) === 0; binIndex(1 / 15, 15) === 0; binIndex(0.0667, 15) === 1; binIndex(1, 15) === 14
 */
export function binIndex(p: number, bins: number = ECE_BINS): number {
  let m = Math.min(bins - 1, Math.max(0, Math.ceil(p * bins) - 1));
  while (m > 0 && p <= m / bins) m--;
  while (m < bins - 1 && p > (m + 1) / bins) m++;
  return m;
}

/** One bin of a reliability diagram. Empty bins keep their place, with null means. */
export interface ReliabilityBin {
  /** 0-based. */
  readonly index: number;
  /** Open lower edge (m−1)/M (the first bin also holds exactly 0). */
  readonly lo: number;
  /** Closed upper edge m/M. */
  readonly hi: number;
  readonly n: number;
  /** Mean confidence in the bin; null when empty. */
  readonly confidence: number | null;
  /** Share correct in the bin; null when empty. */
  readonly accuracy: number | null;
}

/**
 * The bins of a reliability diagram (Guo et al. 2017, §2): per equal-width confidence bin, the
 * count, the mean confidence and the share correct. Every bin is listed, empty ones with nulls.
 */
export function reliabilityBins(pairs: readonly ScoredOutcome[], bins: number = ECE_BINS): ReliabilityBin[] {
  if (!(Number.isInteger(bins) && bins >= 1)) throw new RangeError(`reliabilityBins: bins must be a positive integer, got ${bins}`);
  const n = new Array<number>(bins).fill(0);
  const sumP = new Array<number>(bins).fill(0);
  const sumY = new Array<number>(bins).fill(0);
  pairs.forEach((s, i) => {
    const p = confidence(s.p, i);
    const m = binIndex(p, bins);
    n[m]! += 1;
    sumP[m]! += p;
    sumY[m]! += outcome(s.y, i);
  });
  return n.map((count, m) => ({
    index: m,
    lo: m / bins,
    hi: (m + 1) / bins,
    n: count,
    confidence: count > 0 ? sumP[m]! / count : null,
    accuracy: count > 0 ? sumY[m]! / count : null,
  }));
}

/**
 * Expected calibration error with `bins` equal-width bins (Disentangling Question, Response, and Verifier Languages §5: 15):
 * ECE = Σ_m (|B_m| / n) · |acc(B_m) − conf(B_m)| (Guo et al. 2017, Eq. 3; Naeini et al. 2015).
 * Empty bins add nothing. Null for no pairs.
 * @example expectedCalibrationError([{ p: 0.9, y: 1 }, { p: 0.9, y: 0 }]) // one bin: |0.5 − 0.9| = 0.4
 */
export function expectedCalibrationError(pairs: readonly ScoredOutcome[], bins: number = ECE_BINS): number | null {
  if (pairs.length === 0) return null;
  let ece = 0;
  for (const b of reliabilityBins(pairs, bins)) {
    if (b.n === 0) continue;
    ece += (b.n / pairs.length) * Math.abs((b.accuracy as number) - (b.confidence as number));
  }
  return ece;
}

/**
 * Area under the ROC curve of confidence as a score for "correct": the probability that a correct
 * answer gets a higher confidence than an incorrect one, ties counted one half (the Mann–Whitney
 * statistic U / (n₁·n₀); Hanley & McNeil 1982), in O(n log n).
 * Null when either class is absent (an all-correct or all-incorrect cell): the area is undefined
 * there, not 0.5. A constant confidence gives exactly 0.5.
 * @example auroc([{ p: 0.9, y: 1 }, { p: 0.4, y: 0 }, { p: 0.4, y: 1 }]) // (1 + 0.5) / 2 = 0.75
 */
export function auroc(pairs: readonly ScoredOutcome[]): number | null {
  let n1 = 0;
  pairs.forEach((s, i) => {
    confidence(s.p, i);
    n1 += outcome(s.y, i);
  });
  const n0 = pairs.length - n1;
  if (n1 === 0 || n0 === 0) return null;
  // U counted directly: for each correct answer, the incorrect ones below it, those level with it
  // one half. Each class's confidences sorted as doubles (a Float64Array sorts numerically,
  // without a comparator): a pooled regime of 1.2 M pairs sorted as objects took seconds. U is a
  // sum of halves below 2^53, so it is exact: the same value the sum of mid-ranks gave.
  const correct = new Float64Array(n1);
  const wrong = new Float64Array(n0);
  let a = 0;
  let b = 0;
  for (const s of pairs) {
    if (s.y === true || s.y === 1) correct[a++] = s.p;
    else wrong[b++] = s.p;
  }
  return aurocOfClasses(correct, wrong);
}

/** AUROC from each class's confidences (both non-empty); sorts them in place. */
function aurocOfClasses(correct: Float64Array, wrong: Float64Array): number {
  const n1 = correct.length;
  const n0 = wrong.length;
  correct.sort();
  wrong.sort();
  let u = 0;
  let below = 0;
  let notAbove = 0;
  for (let k = 0; k < n1; k++) {
    const p = correct[k]!;
    while (below < n0 && wrong[below]! < p) below++;
    if (notAbove < below) notAbove = below;
    while (notAbove < n0 && wrong[notAbove]! <= p) notAbove++;
    u += below + (notAbove - below) / 2;
  }
  return u / (n1 * n0);
}

/** The four metrics of Disentangling Question, Response, and Verifier Languages §5 for one group of pairs (a configuration cell, a regime). */
export interface ConfidenceSummary {
  readonly n: number;
  /** Share correct; null for no pairs. */
  readonly accuracy: number | null;
  readonly meanConfidence: number | null;
  readonly brier: number | null;
  readonly ece: number | null;
  /** Null when the group is all correct or all incorrect. */
  readonly auroc: number | null;
}

/** Accuracy, mean confidence, Brier, 15-bin ECE and AUROC of one group. */
export function summarizeConfidence(pairs: readonly ScoredOutcome[], bins: number = ECE_BINS): ConfidenceSummary {
  const n = pairs.length;
  let correct = 0;
  let conf = 0;
  pairs.forEach((s, i) => {
    correct += outcome(s.y, i);
    conf += confidence(s.p, i);
  });
  return {
    n,
    accuracy: n > 0 ? correct / n : null,
    meanConfidence: n > 0 ? conf / n : null,
    brier: brierScore(pairs),
    ece: expectedCalibrationError(pairs, bins),
    auroc: auroc(pairs),
  };
}

/**
 * summarizeConfidence of the pairs (p[i], y[i]) given as columns: the same numbers, each sum taken
 * in the same order, without an object per pair (P(True) at the paper's size summarises 6.2 M
 * pairs several times over).
 * @example summarizeConfidenceColumns(Float64Array.of(0.8, 0.3), Uint8Array.of(1, 0)).brier // 0.065
 */
export function summarizeConfidenceColumns(p: Float64Array, y: Uint8Array, bins: number = ECE_BINS): ConfidenceSummary {
  if (!(Number.isInteger(bins) && bins >= 1)) throw new RangeError(`reliabilityBins: bins must be a positive integer, got ${bins}`);
  const n = p.length;
  if (y.length !== n) throw new RangeError(`summarizeConfidenceColumns: ${n} confidences but ${y.length} outcomes`);
  let correct = 0;
  let conf = 0;
  let brier = 0;
  const inBin = new Array<number>(bins).fill(0);
  const sumP = new Array<number>(bins).fill(0);
  const sumY = new Array<number>(bins).fill(0);
  for (let i = 0; i < n; i++) {
    const yi = outcome(y[i]!, i);
    const pi = confidence(p[i]!, i);
    correct += yi;
    conf += pi;
    const d = pi - yi;
    brier += d * d;
    const m = binIndex(pi, bins);
    inBin[m]! += 1;
    sumP[m]! += pi;
    sumY[m]! += yi;
  }
  let ece = 0;
  for (let m = 0; m < bins; m++) {
    const count = inBin[m]!;
    if (count === 0) continue;
    ece += (count / n) * Math.abs(sumY[m]! / count - sumP[m]! / count);
  }
  let auc: number | null = null;
  if (correct > 0 && correct < n) {
    const right = new Float64Array(correct);
    const wrong = new Float64Array(n - correct);
    let a = 0;
    let b = 0;
    for (let i = 0; i < n; i++) {
      if (y[i] === 1) right[a++] = p[i]!;
      else wrong[b++] = p[i]!;
    }
    auc = aurocOfClasses(right, wrong);
  }
  return {
    n,
    accuracy: n > 0 ? correct / n : null,
    meanConfidence: n > 0 ? conf / n : null,
    brier: n > 0 ? brier / n : null,
    ece: n > 0 ? ece : null,
    auroc: auc,
  };
}
