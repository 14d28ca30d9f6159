import { describe, expect, it } from 'vitest';
import { populationStd, spreadOf } from '../../lib/metrics/spread.js';

describe('spread across groups (Towards Cross-lingual Values Judgment "avg. std. range")', () => {
  it('reproduces a row of the paper: Table 2, GPT-5.2 def-only, the seven category accuracies', () => {
    // Prepare: P&G, N&M, H&N, E&S, R&F, G&H, P&B as printed.
    const row = [68.38, 71.29, 70.59, 66.29, 73.03, 65.57, 73.77];
    // Act
    const s = spreadOf(row);
    // Assess: the paper prints avg 69.85, std 2.96, range 8.20 (population std; the sample std is 3.20).
    expect(s.mean).toBeCloseTo(69.85, 2);
    expect(s.std).toBeCloseTo(2.96, 2);
    expect(s.range).toBeCloseTo(8.2, 2);
  });

  it('reproduces Table 3, GPT-5.2 def-only, across the 14 languages (std 6.04, range 26.36)', () => {
    const row = [72.13, 68.48, 66.18, 83.09, 76.3, 67.43, 75.71, 64.86, 71.43, 65.14, 69.14, 72.8, 68.23, 56.73];
    const s = spreadOf(row);
    expect(s.mean).toBeCloseTo(69.83, 2);
    expect(s.std).toBeCloseTo(6.04, 2);
    expect(s.range).toBeCloseTo(26.36, 2);
  });

  it('is the population std, not the sample std', () => {
    expect(populationStd([2, 4, 4, 4, 5, 5, 7, 9])).toBe(2);
    expect(populationStd([1])).toBe(0);
    expect(populationStd([])).toBeNull();
  });

  it('leaves out groups without a value and never returns NaN', () => {
    expect(spreadOf([0.5, null, undefined, Number.NaN, 0.7])).toEqual({ n: 2, mean: 0.6, std: expect.closeTo(0.1, 12), min: 0.5, max: 0.7, range: expect.closeTo(0.2, 12) });
    expect(spreadOf([null])).toEqual({ n: 0, mean: null, std: null, min: null, max: null, range: null });
  });
});
