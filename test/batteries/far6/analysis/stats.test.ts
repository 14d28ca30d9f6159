import { describe, expect, it } from 'vitest';
import { mean, median, pearson, quantile } from '../../../../lib/metrics/stats.js';

describe('pearson', () => {
  it('matches a hand computation', () => {
    // x̄ = 2, ȳ = 13/3; Sxy = 5, Sxx = 2, Syy = 38/3: r = 5 / sqrt(2 · 12.6667).
    expect(pearson([1, 2, 3], [2, 4, 7])).toBeCloseTo(5 / Math.sqrt(2 * (38 / 3)), 12);
    expect(pearson([1, 2, 3, 4], [8, 6, 4, 2])).toBe(-1);
  });

  it('is null when either side has no variance, or fewer than two pairs', () => {
    expect(pearson([0.5, 0.5, 0.5], [0.1, 0.2, 0.3])).toBeNull();
    expect(pearson([0.1, 0.2, 0.3], [1, 1, 1])).toBeNull();
    // Equal up to rounding is still constant.
    expect(pearson([0.1 + 0.2, 0.3, 0.3], [0, 1, 2])).toBeNull();
    expect(pearson([1], [2])).toBeNull();
    expect(pearson([], [])).toBeNull();
  });

  it('refuses unpaired input', () => {
    expect(() => pearson([1, 2], [1])).toThrow(RangeError);
  });
});

describe('mean, median, quantile', () => {
  it('interpolates linearly between order statistics', () => {
    expect(mean([])).toBeNull();
    expect(mean([1, 2, 6])).toBe(3);
    expect(median([3, 1, 2, 10])).toBe(2.5);
    expect(quantile([5], 0.9)).toBe(5);
    expect(quantile([0, 10], 0.1)).toBeCloseTo(1, 12);
    expect(quantile([], 0.5)).toBeNull();
    expect(() => quantile([1], 1.5)).toThrow(RangeError);
  });
});
