/**
 * The true values behind simulated P(True) replies (config.ts), for simulation_truth.json and for
 * tests that check the analysis recovers them:
 * - the expected accuracy of every benchmark × question × response language cell (the mean over
 *   base items of P(correct), unextractable replies counted wrong);
 * - per accuracy a, verifier bias b, κ and noise s, the population values of the confidence
 *   metrics: mean P(True), Brier, the 15-bin ECE (same bins as lib/metrics/calibration.ts) by
 *   numerical integration over the P(True) logit, and AUROC = Φ(√2 κ / s) (binormal, equal sd).
 */
import type { LanguageCode } from '../../../core/types.js';
import { ECE_BINS } from '../../../metrics/calibration.js';
import type { BaseItem } from '../types.js';
import type { PtrueSimulation } from './config.js';
import { complianceFor, correctProbability, kappaFor } from './draws.js';
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

export interface CellTruth {
  readonly benchmark: string;
  readonly q: LanguageCode;
  readonly r: LanguageCode;
  /** Expected accuracy over the benchmark's base items. */
  readonly accuracy: number;
  /** Probability the reply is in the requested language. */
  readonly compliance: number;
}

/** Expected accuracy of every benchmark × q × r cell for one simulated model. */
export function cellTruth(cfg: PtrueSimulation, seed: number, model: string, items: readonly BaseItem[], languages: readonly LanguageCode[]): CellTruth[] {
  const out: CellTruth[] = [];
  const benchmarks = [...new Set(items.map((i) => i.benchmark))];
  for (const benchmark of benchmarks) {
    const group = items.filter((i) => i.benchmark === benchmark);
    for (const q of languages) {
      for (const r of languages) {
        let sum = 0;
        for (const i of group) {
          const p = correctProbability(cfg, { seed, model, baseItem: i.id, q, r }, i.contentLanguage);
          sum += i.kind === 'multiple_choice' ? p * (1 - cfg.unextractable_rate) : p;
        }
        out.push({ benchmark, q, r, accuracy: sum / group.length, compliance: complianceFor(cfg, r) });
      }
    }
  }
  return out;
}

/** What simulation_truth.json holds for one model: its parameters, its cells, its true AUROC per q × r × v. */
export function modelTruth(cfg: PtrueSimulation, seed: number, model: string, items: readonly BaseItem[], languages: readonly LanguageCode[], verifierLanguages: readonly LanguageCode[]) {
  const auroc: { q: string; r: string; v: string; auroc: number }[] = [];
  for (const q of languages) for (const r of languages) for (const v of verifierLanguages) auroc.push({ q, r, v, auroc: normalCdf((Math.SQRT2 * kappaFor(cfg, q, r, v)) / cfg.noise) });
  return { simulated: true, parameters: cfg, cells: cellTruth(cfg, seed, model, items, languages), auroc };
}
