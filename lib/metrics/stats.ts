/** Small numeric helpers for the estimators. Pure; no allocation beyond what the result needs. */

/** Arithmetic mean; null for an empty list. */
export function mean(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/**
 * Pearson correlation of paired values; null when fewer than two pairs or when either side has no
 * variance (a constant profile has no correlation, not r = 0). Two passes, centred, for accuracy.
 * @example pearson([1, 2, 3], [2, 4, 7]) // ≈ 0.993
 */
export function pearson(x: readonly number[], y: readonly number[]): number | null {
  if (x.length !== y.length) throw new RangeError(`pearson: ${x.length} x values but ${y.length} y values`);
  const n = x.length;
  if (n < 2) return null;
  const mx = mean(x) as number;
  const my = mean(y) as number;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (x[i] as number) - mx;
    const dy = (y[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  // Relative threshold: values equal up to rounding count as constant.
  const scale = Math.max(1, Math.abs(mx), Math.abs(my));
  const eps = n * (Number.EPSILON * scale) ** 2;
  if (sxx <= eps || syy <= eps) return null;
  const r = sxy / Math.sqrt(sxx * syy);
  return Math.max(-1, Math.min(1, r));
}

/**
 * Quantile with linear interpolation between order statistics (Hyndman–Fan type 7, the default of
 * R and NumPy); null for an empty list.
 */
export function quantile(xs: readonly number[], p: number): number | null {
  if (xs.length === 0) return null;
  if (!(p >= 0 && p <= 1)) throw new RangeError(`quantile: p must lie in [0, 1], got ${p}`);
  const sorted = [...xs].sort((a, b) => a - b);
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const a = sorted[lo] as number;
  const b = sorted[Math.min(lo + 1, sorted.length - 1)] as number;
  return a + (h - lo) * (b - a);
}

export function median(xs: readonly number[]): number | null {
  return quantile(xs, 0.5);
}
