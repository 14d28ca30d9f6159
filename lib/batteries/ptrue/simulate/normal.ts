/** The standard normal: its CDF and a deterministic draw from two uniforms (expectations under it: truth.ts). */

/** Φ(x), by the Abramowitz–Stegun 7.1.26 erf approximation (|error| < 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** A standard normal draw from two uniforms in [0, 1) (Box–Muller). */
export function normalFromUniforms(u1: number, u2: number): number {
  const u = Math.max(u1, 1e-300);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * u2);
}

export const logistic = (x: number): number => 1 / (1 + Math.exp(-x));
