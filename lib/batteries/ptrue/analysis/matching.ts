/**
 * Matching effects on AUROC and ECE (Disentangling Question, Response, and Verifier Languages §5 "Matching effects", §6.4, Table 4, App. C):
 * per benchmark and metric, over the configuration cells (model × q × r × v; 2,160 in the paper),
 *
 *   metric = β0 + β1·[Q=R] + β2·[R=V] + β3·[Q=V] + β4·[Q=R=V] + u_model + ε,
 *
 * with a random intercept per model, fitted by REML (lib/metrics/regression.ts; Wald 95 %
 * intervals). β4 is what all three matching adds beyond the three pairs (a cell where all three
 * match has every indicator set). Four coefficients × two metrics × three benchmarks = the paper's
 * 24. Cells with an undefined metric (AUROC of an all-correct cell) are left out.
 *
 * The model-level check (§5: "resamples ten models and fits per-model regressions"): the same
 * regression by least squares within each model, the mean of the per-model coefficients, and a
 * percentile interval from resampling models with replacement (seeded), so an effect carried by a
 * few models shows a wide interval.
 */
import { fitRandomIntercept, groupBy, ols, quantile, resampleIndices, seededRandom } from '../../../api/battery.js';
import type { Coefficient } from '../../../api/battery.js';
import type { CellMetrics, MetricName } from './types.js';

export const MATCH_TERMS = ['(intercept)', 'Q=R', 'R=V', 'Q=V', 'Q=R=V'] as const;

/** The covariate row of a condition. */
export function matchRow(q: string, r: string, v: string): number[] {
  const qr = q === r ? 1 : 0;
  const rv = r === v ? 1 : 0;
  const qv = q === v ? 1 : 0;
  return [1, qr, rv, qv, qr * rv];
}

export interface ModelLevelCoefficient {
  readonly name: string;
  /** Mean of the per-model least-squares coefficients. */
  readonly mean: number;
  /** Percentile interval over model resamples; null without draws. */
  readonly lo: number | null;
  readonly hi: number | null;
  /** Models whose own coefficient has the sign of the mean. */
  readonly sameSign: number;
  readonly models: number;
}

export interface MatchingEffects {
  readonly benchmark: string;
  readonly metric: MetricName;
  readonly cells: number;
  readonly models: number;
  /** REML fit with a random intercept per model; null (with `reason`) when it cannot be fitted. */
  readonly mixed: { readonly coefficients: readonly Coefficient[]; readonly sigma2: number; readonly tau2: number } | null;
  readonly modelLevel: readonly ModelLevelCoefficient[];
  readonly reason: string | null;
}

/** The matching regressions of one benchmark and metric. */
export function matchingEffects(cells: readonly CellMetrics[], benchmark: string, metric: MetricName, opts: { readonly draws: number; readonly seed: number }): MatchingEffects {
  const usable = cells.filter((c) => c.benchmark === benchmark && c[metric] !== null);
  const x = usable.map((c) => matchRow(c.q, c.r, c.v));
  const y = usable.map((c) => c[metric] as number);
  const g = usable.map((c) => c.model);
  const models = [...new Set(g)].sort();
  const fit = fitRandomIntercept(x, y, g, MATCH_TERMS);
  // Per-model least squares.
  const perModel: number[][] = [];
  for (const [, list] of groupBy(usable, (c) => c.model)) {
    const f = ols(
      list.map((c) => matchRow(c.q, c.r, c.v)),
      list.map((c) => c[metric] as number),
      MATCH_TERMS,
    );
    if (f.ok) perModel.push(f.value.coefficients.map((c) => c.estimate));
  }
  const random = seededRandom(opts.seed);
  const draws: number[][] = [];
  for (let d = 0; d < opts.draws && perModel.length > 0; d++) {
    const sample = resampleIndices(perModel.length, random).map((i) => perModel[i]!);
    draws.push(MATCH_TERMS.map((_, k) => sample.reduce((s, b) => s + b[k]!, 0) / sample.length));
  }
  const modelLevel = perModel.length === 0 ? [] : MATCH_TERMS.map((name, k) => {
    const mean = perModel.reduce((s, b) => s + b[k]!, 0) / perModel.length;
    const ks = draws.map((d) => d[k]!);
    return {
      name,
      mean,
      lo: quantile(ks, 0.025),
      hi: quantile(ks, 0.975),
      sameSign: perModel.filter((b) => Math.sign(b[k]!) === Math.sign(mean)).length,
      models: perModel.length,
    };
  });
  return {
    benchmark,
    metric,
    cells: usable.length,
    models: models.length,
    mixed: fit.ok ? { coefficients: fit.value.coefficients, sigma2: fit.value.sigma2, tau2: fit.value.tau2 } : null,
    modelLevel,
    reason: fit.ok ? null : fit.reason,
  };
}
