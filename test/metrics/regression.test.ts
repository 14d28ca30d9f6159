import { describe, expect, it } from 'vitest';
import { fitRandomIntercept, ols, Z_95 } from '../../lib/metrics/regression.js';

describe('ordinary least squares', () => {
  it('matches a hand computation', () => {
    // slope = Σ(x−1.5)(y−4)/Σ(x−1.5)² = 11/5, intercept 4 − 2.2·1.5 = 0.7; RSS 1.8 on 2 df → σ² 0.9
    const fit = ols([[1, 0], [1, 1], [1, 2], [1, 3]], [1, 3, 4, 8], ['(intercept)', 'x']);
    if (!fit.ok) throw new Error(fit.reason);
    const [a, b] = fit.value.coefficients;
    expect(a!.estimate).toBeCloseTo(0.7, 12);
    expect(b!.estimate).toBeCloseTo(2.2, 12);
    expect(fit.value.sigma2).toBeCloseTo(0.9, 12);
    expect(b!.se).toBeCloseTo(Math.sqrt(0.9 / 5), 12);
    expect(b!.hi - b!.estimate).toBeCloseTo(Z_95 * b!.se, 12);
  });

  it('refuses collinear covariates and too few rows', () => {
    expect(ols([[1, 2], [1, 2], [1, 2]], [1, 2, 3], ['a', 'b'])).toEqual({ ok: false, reason: 'the covariates a, b are collinear' });
    expect(ols([[1]], [1], ['a'])).toEqual({ ok: false, reason: '1 rows cannot identify 1 coefficients' });
  });
});

describe('random intercept per group (REML)', () => {
  it('equals the ANOVA estimators in a balanced one-way layout', () => {
    // Groups A 1 2 3, B 4 5 6, C 2 3 7: MSW = 18/6 = 3, MSB = 3 · 4.667 / 2 = 7
    // → σ² = 3, τ² = (7 − 3)/3 = 4/3, β = 11/3, Var(β) = MSB / 9.
    const y = [1, 2, 3, 4, 5, 6, 2, 3, 7];
    const g = ['A', 'A', 'A', 'B', 'B', 'B', 'C', 'C', 'C'];
    const fit = fitRandomIntercept(y.map(() => [1]), y, g, ['(intercept)']);
    if (!fit.ok) throw new Error(fit.reason);
    expect(fit.value.method).toBe('REML');
    expect(fit.value.sigma2).toBeCloseTo(3, 6);
    expect(fit.value.tau2).toBeCloseTo(4 / 3, 6);
    expect(fit.value.coefficients[0]!.estimate).toBeCloseTo(11 / 3, 9);
    expect(fit.value.coefficients[0]!.se).toBeCloseTo(Math.sqrt(7 / 9), 6);
    expect(fit.value.groups).toBe(3);
  });

  it('stops at τ² = 0 when the groups differ less than chance, and is then least squares', () => {
    const y = [1, 5, 2, 4, 3, 3];
    const g = ['A', 'A', 'B', 'B', 'C', 'C'];
    const fit = fitRandomIntercept(y.map(() => [1]), y, g, ['(intercept)']);
    if (!fit.ok) throw new Error(fit.reason);
    expect(fit.value.tau2).toBe(0);
    expect(fit.value.sigma2).toBeCloseTo(2, 12);
    expect(fit.value.coefficients[0]!.se).toBeCloseTo(Math.sqrt(2 / 6), 12);
  });

  it('with the same covariates in every group: slope as least squares, its SE as the fixed-effects model', () => {
    // Four groups with intercepts 0, 2, 5, 1 and the same x = 0…4 each; y = u + 0.5x + small noise.
    const u = [0, 2, 5, 1];
    const noise = [0.3, -0.2, 0.1, -0.4, 0.2, -0.1, 0.25, 0.05, -0.3, 0.15, 0.2, -0.25, 0.1, 0.3, -0.35, -0.05, 0.1, -0.2, 0.35, -0.1];
    const x: number[][] = [];
    const y: number[] = [];
    const g: string[] = [];
    u.forEach((ug, gi) => {
      for (let k = 0; k < 5; k++) {
        x.push([1, k]);
        y.push(ug + 0.5 * k + noise[gi * 5 + k]!);
        g.push(`m${gi}`);
      }
    });
    const mixed = fitRandomIntercept(x, y, g, ['(intercept)', 'x']);
    const pooled = ols(x, y, ['(intercept)', 'x']);
    const fixed = ols(x.map((r, i) => [r[1]!, ...u.map((_, gi) => (g[i] === `m${gi}` ? 1 : 0))]), y, ['x', 'm0', 'm1', 'm2', 'm3']);
    if (!mixed.ok || !pooled.ok || !fixed.ok) throw new Error('fit');
    expect(mixed.value.coefficients[1]!.estimate).toBeCloseTo(pooled.value.coefficients[1]!.estimate, 9);
    expect(mixed.value.sigma2).toBeCloseTo(fixed.value.sigma2, 6);
    expect(mixed.value.coefficients[1]!.se).toBeCloseTo(fixed.value.coefficients[0]!.se, 6);
    // The pooled fit, blind to the groups, reports a far larger slope SE.
    expect(pooled.value.coefficients[1]!.se).toBeGreaterThan(2 * mixed.value.coefficients[1]!.se);
    expect(mixed.value.tau2).toBeGreaterThan(1);
  });

  it('needs two groups and matching lengths', () => {
    expect(fitRandomIntercept([[1], [1], [1]], [1, 2, 3], ['a', 'a', 'a'], ['(intercept)'])).toEqual({ ok: false, reason: 'a random intercept needs at least two groups' });
    expect(fitRandomIntercept([[1], [1], [1]], [1, 2, 3], ['a', 'b'], ['(intercept)']).ok).toBe(false);
  });
});
