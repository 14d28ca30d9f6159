/**
 * Ordinary least squares and a linear model with a random intercept per group, for the
 * matching-effect regressions of Disentangling Question, Response, and Verifier Languages §5 ("mixed models over 2,160 configuration cells and a
 * random intercept for each model"; per-model regressions as the model-level check).
 *
 * The mixed model is fitted here, in TypeScript, by restricted maximum likelihood (REML, as lme4's
 * `lmer` does by default): with one variance component the likelihood has a closed form per group,
 * so it is profiled over the single ratio λ = τ²/σ² and maximised in one dimension — an honest fit,
 * not an approximation. For group g with n_g rows, V_g = σ²(I + λJ), V_g⁻¹ = (I − c_g J)/σ² with
 * c_g = λ/(1 + n_g λ), log|V_g| = n_g log σ² + log(1 + n_g λ). Given λ, β̂ is generalised least
 * squares, σ̂² = Q/(N − p) with Q = r'(I + λJ)⁻¹r, and
 *   −2 ℓ_REML(λ) = (N − p) log σ̂² + Σ_g log(1 + n_g λ) + log|X'(I + λJ)⁻¹X| + const.
 * λ is found on a grid over log λ (and λ = 0, the boundary) refined by golden-section search.
 * Standard errors are the usual Cov(β̂) = σ̂² (X'(I + λ̂J)⁻¹X)⁻¹; intervals are Wald intervals with
 * the normal quantile (large samples: 2,160 cells). No degrees-of-freedom correction
 * (Satterthwaite, Kenward–Roger) is attempted; with few groups the intercept's interval is optimistic.
 */
import { cholesky, choleskyInverse, choleskyLogDet, choleskySolve, type Matrix } from './linalg.js';

/** z for a two-sided 95 % Wald interval. */
export const Z_95 = 1.959963984540054;

export interface Coefficient {
  readonly name: string;
  readonly estimate: number;
  readonly se: number;
  readonly lo: number;
  readonly hi: number;
}

export interface OlsFit {
  readonly coefficients: readonly Coefficient[];
  /** Residual variance RSS / (N − p). */
  readonly sigma2: number;
  readonly n: number;
  readonly df: number;
}

export type FitResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

function crossProducts(x: readonly (readonly number[])[], y: readonly number[]): { xtx: Matrix; xty: number[] } {
  const p = x[0]?.length ?? 0;
  const xtx: Matrix = Array.from({ length: p }, () => new Array<number>(p).fill(0));
  const xty = new Array<number>(p).fill(0);
  x.forEach((row, i) => {
    for (let a = 0; a < p; a++) {
      xty[a]! += row[a]! * y[i]!;
      for (let b = 0; b <= a; b++) xtx[a]![b]! += row[a]! * row[b]!;
    }
  });
  for (let a = 0; a < p; a++) for (let b = a + 1; b < p; b++) xtx[a]![b] = xtx[b]![a]!;
  return { xtx, xty };
}

function checkShapes(x: readonly (readonly number[])[], y: readonly number[], names: readonly string[]): string | null {
  if (x.length !== y.length) return `${x.length} rows of covariates but ${y.length} outcomes`;
  if (x.some((r) => r.length !== names.length)) return `every row must have ${names.length} covariates (${names.join(', ')})`;
  if (y.some((v) => !Number.isFinite(v)) || x.some((r) => r.some((v) => !Number.isFinite(v)))) return 'a value is not a finite number';
  if (x.length <= names.length) return `${x.length} rows cannot identify ${names.length} coefficients`;
  return null;
}

function coefficients(names: readonly string[], beta: readonly number[], cov: Matrix): Coefficient[] {
  return names.map((name, i) => {
    const se = Math.sqrt(Math.max(0, cov[i]![i]!));
    return { name, estimate: beta[i]!, se, lo: beta[i]! - Z_95 * se, hi: beta[i]! + Z_95 * se };
  });
}

/**
 * Least squares of y on the columns of x (include a column of ones for an intercept).
 * @example ols([[1, 0], [1, 1], [1, 2]], [1, 3, 5], ['(intercept)', 'x']) // estimates 1 and 2
 */
export function ols(x: readonly (readonly number[])[], y: readonly number[], names: readonly string[]): FitResult<OlsFit> {
  const bad = checkShapes(x, y, names);
  if (bad) return { ok: false, reason: bad };
  const { xtx, xty } = crossProducts(x, y);
  const l = cholesky(xtx);
  if (!l) return { ok: false, reason: `the covariates ${names.join(', ')} are collinear` };
  const beta = choleskySolve(l, xty);
  let rss = 0;
  x.forEach((row, i) => {
    const r = y[i]! - row.reduce((s, v, k) => s + v * beta[k]!, 0);
    rss += r * r;
  });
  const df = x.length - names.length;
  const sigma2 = rss / df;
  const inv = choleskyInverse(l);
  return { ok: true, value: { coefficients: coefficients(names, beta, inv.map((r) => r.map((v) => v * sigma2))), sigma2, n: x.length, df } };
}

export interface RandomInterceptFit {
  readonly method: 'REML';
  readonly coefficients: readonly Coefficient[];
  /** Residual variance σ². */
  readonly sigma2: number;
  /** Variance of the group intercepts τ² (0 at the boundary). */
  readonly tau2: number;
  readonly groups: number;
  readonly n: number;
  /** −2 × the restricted log-likelihood, up to its constant. */
  readonly deviance: number;
}

interface Group {
  readonly rows: number[];
}

/** The REML criterion and the GLS solution at one λ. */
function remlAt(lambda: number, x: readonly (readonly number[])[], y: readonly number[], groups: readonly Group[]) {
  const p = x[0]!.length;
  const xtvx: Matrix = Array.from({ length: p }, () => new Array<number>(p).fill(0));
  const xtvy = new Array<number>(p).fill(0);
  let logDetV = 0;
  for (const g of groups) {
    const n = g.rows.length;
    const c = lambda / (1 + n * lambda);
    logDetV += Math.log(1 + n * lambda);
    const sx = new Array<number>(p).fill(0);
    let sy = 0;
    for (const i of g.rows) {
      const row = x[i]!;
      sy += y[i]!;
      for (let a = 0; a < p; a++) {
        sx[a]! += row[a]!;
        xtvy[a]! += row[a]! * y[i]!;
        for (let b = 0; b <= a; b++) xtvx[a]![b]! += row[a]! * row[b]!;
      }
    }
    for (let a = 0; a < p; a++) {
      xtvy[a]! -= c * sx[a]! * sy;
      for (let b = 0; b <= a; b++) xtvx[a]![b]! -= c * sx[a]! * sx[b]!;
    }
  }
  for (let a = 0; a < p; a++) for (let b = a + 1; b < p; b++) xtvx[a]![b] = xtvx[b]![a]!;
  const l = cholesky(xtvx);
  if (!l) return null;
  const beta = choleskySolve(l, xtvy);
  let q = 0;
  for (const g of groups) {
    const c = lambda / (1 + g.rows.length * lambda);
    let sr = 0;
    for (const i of g.rows) {
      const r = y[i]! - x[i]!.reduce((s, v, k) => s + v * beta[k]!, 0);
      q += r * r;
      sr += r;
    }
    q -= c * sr * sr;
  }
  const dfResid = y.length - p;
  const sigma2 = q / dfResid;
  const deviance = dfResid * Math.log(sigma2) + logDetV + choleskyLogDet(l);
  return { beta, sigma2, deviance, l };
}

/**
 * y = Xβ + u_group + ε, u ~ N(0, τ²), ε ~ N(0, σ²), fitted by REML (see the module comment).
 * @example fitRandomIntercept(x, y, models, ['(intercept)', 'q_eq_r', 'r_eq_v', 'q_eq_v', 'all_equal'])
 */
export function fitRandomIntercept(
  x: readonly (readonly number[])[],
  y: readonly number[],
  group: readonly string[],
  names: readonly string[],
): FitResult<RandomInterceptFit> {
  const bad = checkShapes(x, y, names);
  if (bad) return { ok: false, reason: bad };
  if (group.length !== y.length) return { ok: false, reason: `${group.length} group labels but ${y.length} outcomes` };
  const byGroup = new Map<string, number[]>();
  group.forEach((g, i) => byGroup.set(g, [...(byGroup.get(g) ?? []), i]));
  const groups = [...byGroup.values()].map((rows) => ({ rows }));
  if (groups.length < 2) return { ok: false, reason: 'a random intercept needs at least two groups' };
  const at = (lambda: number) => remlAt(lambda, x, y, groups);
  const zero = at(0);
  if (!zero) return { ok: false, reason: `the covariates ${names.join(', ')} are collinear` };
  // Grid over log λ, then golden section around the best grid point.
  let best = { lambda: 0, deviance: zero.deviance };
  const grid: number[] = [];
  for (let t = -12; t <= 8; t += 0.5) grid.push(t);
  const dev = (t: number): number => at(Math.exp(t))?.deviance ?? Number.POSITIVE_INFINITY;
  let bestT: number | null = null;
  let bestGrid = Number.POSITIVE_INFINITY;
  for (const t of grid) {
    const d = dev(t);
    if (d < bestGrid) {
      bestGrid = d;
      bestT = t;
    }
  }
  if (bestT !== null && bestGrid < best.deviance) {
    let lo = bestT - 0.5;
    let hi = bestT + 0.5;
    const phi = (Math.sqrt(5) - 1) / 2;
    let c = hi - phi * (hi - lo);
    let d = lo + phi * (hi - lo);
    let fc = dev(c);
    let fd = dev(d);
    for (let k = 0; k < 80 && hi - lo > 1e-10; k++) {
      if (fc < fd) {
        hi = d;
        d = c;
        fd = fc;
        c = hi - phi * (hi - lo);
        fc = dev(c);
      } else {
        lo = c;
        c = d;
        fc = fd;
        d = lo + phi * (hi - lo);
        fd = dev(d);
      }
    }
    const t = (lo + hi) / 2;
    const dt = dev(t);
    if (dt < best.deviance) best = { lambda: Math.exp(t), deviance: dt };
  }
  const fit = at(best.lambda)!;
  const inv = choleskyInverse(fit.l);
  return {
    ok: true,
    value: {
      method: 'REML',
      coefficients: coefficients(names, fit.beta, inv.map((r) => r.map((v) => v * fit.sigma2))),
      sigma2: fit.sigma2,
      tau2: best.lambda * fit.sigma2,
      groups: groups.length,
      n: y.length,
      deviance: fit.deviance,
    },
  };
}
