/**
 * The true values behind simulated P(True) replies (config.ts), for simulation_truth.json and for
 * tests that check the analysis recovers them:
 * - the expected accuracy of every benchmark × question × response language cell (the mean over
 *   base items of P(correct), unextractable replies counted wrong);
 * - per accuracy a, verifier bias b, κ and noise s, the population values of the confidence
 *   metrics: mean P(True), Brier, the 15-bin ECE (same bins as lib/metrics/calibration.ts) by
 *   numerical integration over the P(True) logit, and AUROC = Φ(√2 κ / s) (binormal, equal sd).
 */
import { ECE_BINS } from '../../../api/battery.js';
import type { LanguageCode } from '../../../api/battery.js';
import type { BaseItem } from '../types.js';
import type { PtrueSimulation } from './config.js';
import { complianceFor, correctProbability, itemShift, kappaFor } from './draws.js';
import { logistic, normalCdf } from './normal.js';

export interface ConfidenceTruth {
  readonly meanConfidence: number;
  readonly brier: number;
  readonly ece: number;
  readonly auroc: number;
}

/** ∫_a^b f(z) N(z; μ, s²) dz, midpoint rule, the range clipped to μ ± 9s. */
function integrate(a: number, b: number, mu: number, s: number, f: (z: number) => number, steps = 400): number {
  const lo = Math.max(a, mu - 9 * s);
  const hi = Math.min(b, mu + 9 * s);
  if (!(hi > lo)) return 0;
  const h = (hi - lo) / steps;
  let sum = 0;
  for (let i = 0; i < steps; i++) {
    const z = lo + (i + 0.5) * h;
    const d = (z - mu) / s;
    sum += f(z) * Math.exp(-0.5 * d * d);
  }
  return (sum * h) / (s * Math.sqrt(2 * Math.PI));
}

/**
 * Population confidence metrics for accuracy `a` and P(True) = σ(z), z | correct ~ N(b + κ, s²),
 * z | wrong ~ N(b − κ, s²).
 * @example confidenceTruth({ accuracy: 0.5, bias: 0, kappa: 0, noise: 1 }).auroc // 0.5
 */
export function confidenceTruth(args: { readonly accuracy: number; readonly bias: number; readonly kappa: number; readonly noise: number; readonly bins?: number }): ConfidenceTruth {
  const { accuracy: a, bias: b, kappa: k, noise: s } = args;
  const bins = args.bins ?? ECE_BINS;
  const mu1 = b + k;
  const mu0 = b - k;
  const logit = (p: number): number => (p <= 0 ? Number.NEGATIVE_INFINITY : p >= 1 ? Number.POSITIVE_INFINITY : Math.log(p / (1 - p)));
  let ece = 0;
  for (let m = 0; m < bins; m++) {
    const lo = logit(m / bins);
    const hi = logit((m + 1) / bins);
    const mass1 = normalCdf((hi - mu1) / s) - normalCdf((lo - mu1) / s);
    const conf1 = integrate(lo, hi, mu1, s, logistic);
    const conf0 = integrate(lo, hi, mu0, s, logistic);
    ece += Math.abs(a * mass1 - (a * conf1 + (1 - a) * conf0));
  }
  const all = [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY] as const;
  const meanConfidence = a * integrate(...all, mu1, s, logistic, 4000) + (1 - a) * integrate(...all, mu0, s, logistic, 4000);
  const brier = a * integrate(...all, mu1, s, (z) => (1 - logistic(z)) ** 2, 4000) + (1 - a) * integrate(...all, mu0, s, (z) => logistic(z) ** 2, 4000);
  return { meanConfidence, brier, ece, auroc: normalCdf((Math.SQRT2 * k) / s) };
}

/**
 * How the simulated judge role reads short-answer replies: a share `error_rate` of its verdicts
 * flipped, a share `malformed_rate` of its outputs unreadable (counted incorrect). `null` when no
 * judge reads them, or a judge that is not simulated (its errors are unknown).
 */
export type JudgeTruth = { readonly error_rate: number; readonly malformed_rate: number } | null;

export interface CellTruth {
  readonly benchmark: string;
  readonly q: LanguageCode;
  readonly r: LanguageCode;
  /** Expected true accuracy over the benchmark's base items (an unextractable option counted wrong). */
  readonly accuracy: number;
  /** Who decides correctness in the analysis: the option letter (multiple choice) or the judge (short answer). */
  readonly scored_by: 'option' | 'judge';
  /**
   * The accuracy the analysis should find: `accuracy` for option-scored items; for judge-scored
   * items (1 − malformed)·((1 − flip)·a + flip·(1 − a)) — the judge's flips and malformed outputs
   * are in the data the simulator wrote. Null when a judge-scored cell has no simulated judge.
   */
  readonly accuracy_read: number | null;
  /** Probability the reply is in the requested language. */
  readonly compliance: number;
}

/** The probability that a reply of true correctness probability `p` is read correct. */
function readProbability(p: number, scoredBy: 'option' | 'judge', judge: JudgeTruth): number | null {
  if (scoredBy === 'option') return p;
  if (judge === null) return null;
  return (1 - judge.malformed_rate) * ((1 - judge.error_rate) * p + judge.error_rate * (1 - p));
}

/** Expected accuracy of every benchmark × q × r cell for one simulated model, true and as read. */
export function cellTruth(cfg: PtrueSimulation, seed: number, model: string, items: readonly BaseItem[], languages: readonly LanguageCode[], judge: JudgeTruth = null): CellTruth[] {
  const out: CellTruth[] = [];
  const benchmarks = [...new Set(items.map((i) => i.benchmark))];
  for (const benchmark of benchmarks) {
    const group = items.filter((i) => i.benchmark === benchmark);
    const scoredBy = group.every((i) => i.kind === 'multiple_choice') ? 'option' : 'judge';
    // Each item's difficulty shift once, not once per q × r cell (two SHA-256 each: 1.7 s at the paper's size).
    const shifts = group.map((i) => itemShift(seed, model, i.id, cfg.item_spread));
    for (const q of languages) {
      for (const r of languages) {
        let sum = 0;
        let read: number | null = 0;
        for (const [n, i] of group.entries()) {
          const p = correctProbability(cfg, { seed, model, baseItem: i.id, q, r }, i.contentLanguage, shifts[n]) * (i.kind === 'multiple_choice' ? 1 - cfg.unextractable_rate : 1);
          sum += p;
          const pr = readProbability(p, i.kind === 'multiple_choice' ? 'option' : 'judge', judge);
          read = read === null || pr === null ? null : read + pr;
        }
        out.push({ benchmark, q, r, accuracy: sum / group.length, scored_by: scoredBy, accuracy_read: read === null ? null : read / group.length, compliance: complianceFor(cfg, r) });
      }
    }
  }
  return out;
}

/**
 * AUROC of P(True) against correctness as the judge reads it. True AUROC `auroc` (correct above
 * incorrect); the judge's labels are independent of the P(True) draw given the true correctness,
 * so a read-correct reply is a mixture of truly correct and truly incorrect ones, and so is a
 * read-incorrect one: AUROC = Σ w₊w₋·AUC(pair), AUC = auroc (correct over incorrect), 1 − auroc
 * (the reverse), ½ (same truth).
 * @example readAuroc(0.8, 0.6, { error_rate: 0, malformed_rate: 0 }) // 0.8
 */
export function readAuroc(auroc: number, accuracy: number, judge: NonNullable<JudgeTruth>): number {
  const e = judge.error_rate;
  const m = judge.malformed_rate;
  const posC = accuracy * (1 - m) * (1 - e);
  const posW = (1 - accuracy) * (1 - m) * e;
  const negC = accuracy * (m + (1 - m) * e);
  const negW = (1 - accuracy) * (m + (1 - m) * (1 - e));
  const norm = (posC + posW) * (negC + negW);
  if (!(norm > 0)) return Number.NaN;
  return (posC * negW * auroc + posW * negC * (1 - auroc) + 0.5 * (posC * negC + posW * negW)) / norm;
}

/**
 * What simulation_truth.json holds for one model: its parameters, its cells (true and read
 * accuracy), its true AUROC per q × r × v, and for judge-scored benchmarks the AUROC against the
 * judge's reading per benchmark × q × r × v.
 */
export function modelTruth(cfg: PtrueSimulation, seed: number, model: string, items: readonly BaseItem[], languages: readonly LanguageCode[], verifierLanguages: readonly LanguageCode[], judge: JudgeTruth = null) {
  const auroc: { q: string; r: string; v: string; auroc: number }[] = [];
  for (const q of languages) for (const r of languages) for (const v of verifierLanguages) auroc.push({ q, r, v, auroc: normalCdf((Math.SQRT2 * kappaFor(cfg, q, r, v)) / cfg.noise) });
  const cells = cellTruth(cfg, seed, model, items, languages, judge);
  const aurocRead: { benchmark: string; q: string; r: string; v: string; auroc: number }[] = [];
  if (judge !== null) {
    for (const c of cells.filter((x) => x.scored_by === 'judge')) {
      for (const a of auroc.filter((x) => x.q === c.q && x.r === c.r)) aurocRead.push({ benchmark: c.benchmark, q: c.q, r: c.r, v: a.v, auroc: readAuroc(a.auroc, c.accuracy, judge) });
    }
  }
  return { simulated: true, parameters: cfg, judge, cells, auroc, auroc_read: aurocRead };
}
