/**
 * Dense linear algebra for the small symmetric systems of the regressions (a handful of
 * coefficients): Cholesky factorisation, solve, inverse and log-determinant. Pure, no allocation
 * beyond the results.
 */

export type Matrix = number[][];

/**
 * Lower-triangular L with A = L Lᵀ for a symmetric positive-definite A; null when A is not
 * (numerically) positive definite — a regression whose columns are collinear.
 */
export function cholesky(a: readonly (readonly number[])[]): Matrix | null {
  const n = a.length;
  const l: Matrix = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const scale = Math.max(1e-300, ...a.map((r, i) => Math.abs(r[i] as number)));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i]![j] as number;
      for (let k = 0; k < j; k++) s -= l[i]![k]! * l[j]![k]!;
      if (i === j) {
        if (!(s > 1e-12 * scale)) return null;
        l[i]![i] = Math.sqrt(s);
      } else {
        l[i]![j] = s / l[j]![j]!;
      }
    }
  }
  return l;
}

/** Solves L Lᵀ x = b. */
export function choleskySolve(l: Matrix, b: readonly number[]): number[] {
  const n = l.length;
  const y = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    let s = b[i] as number;
    for (let k = 0; k < i; k++) s -= l[i]![k]! * y[k]!;
    y[i] = s / l[i]![i]!;
  }
  const x = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let k = i + 1; k < n; k++) s -= l[k]![i]! * x[k]!;
    x[i] = s / l[i]![i]!;
  }
  return x;
}

/** A⁻¹ from A's Cholesky factor. */
export function choleskyInverse(l: Matrix): Matrix {
  const n = l.length;
  const cols = Array.from({ length: n }, (_, j) => choleskySolve(l, Array.from({ length: n }, (_, i) => (i === j ? 1 : 0))));
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => cols[j]![i]!));
}

/** log det A from A's Cholesky factor. */
export function choleskyLogDet(l: Matrix): number {
  let s = 0;
  for (let i = 0; i < l.length; i++) s += Math.log(l[i]![i]!);
  return 2 * s;
}
