import { describe, expect, it } from 'vitest';
import { bootstrapTauReference, kendallTauB, orderReversals, ranksOf, resampleIndices, tauBetween } from '../../lib/metrics/rank.js';
import { seededRandom } from '../../lib/core/hash.js';

describe('Kendall τ-b', () => {
  it('counts concordant and discordant pairs by hand', () => {
    // Pairs of 4: only (2,3) is discordant → (5 − 1) / 6
    expect(kendallTauB([1, 2, 3, 4], [1, 3, 2, 4])).toBeCloseTo(4 / 6, 12);
    expect(kendallTauB([1, 2, 3], [3, 2, 1])).toBe(-1);
    expect(kendallTauB([1, 2, 3], [10, 20, 30])).toBe(1);
  });

  it('corrects for ties (τ-b, not τ-a)', () => {
    // x = 1 1 2 3, y = 1 2 3 4: n0 = 6, tied in x = 1, tied in y = 0; C = 5, D = 0 → 5 / √(5 · 6)
    expect(kendallTauB([1, 1, 2, 3], [1, 2, 3, 4])).toBeCloseTo(5 / Math.sqrt(30), 12);
    // τ-a would be 5/6.
    expect(kendallTauB([1, 1, 2, 3], [1, 2, 3, 4])).not.toBeCloseTo(5 / 6, 3);
  });

  it('is null for fewer than two units or a constant side, and refuses unequal lengths', () => {
    expect(kendallTauB([1], [1])).toBeNull();
    expect(kendallTauB([2, 2, 2], [1, 2, 3])).toBeNull();
    expect(() => kendallTauB([1, 2], [1])).toThrow(RangeError);
  });
});

describe('ranks, reversals and τ between settings', () => {
  it('ranks with 1 = best and shares tied ranks', () => {
    expect(ranksOf([0.7, 0.9, 0.7], 'higher')).toEqual([2.5, 1, 2.5]);
    expect(ranksOf([0.3, 0.1, 0.2], 'lower')).toEqual([3, 1, 2]);
  });

  it('counts pairs whose order flips, over the units both settings score, skipping ties and ineligible pairs', () => {
    const en = new Map([['a', 0.8], ['b', 0.7], ['c', 0.6], ['d', 0.5]]);
    const hi = new Map([['a', 0.5], ['b', 0.7], ['c', 0.6], ['e', 0.9]]);
    const r = orderReversals(en, hi);
    expect(r.pairs).toBe(3);
    expect(r.reversed).toEqual([['a', 'b'], ['a', 'c']]);
    expect(orderReversals(en, hi, (x, y) => x !== 'a' && y !== 'a').reversed).toEqual([]);
    expect(tauBetween(en, hi)).toBeCloseTo(-1 / 3, 12);
  });
});

describe('bootstrap τ reference', () => {
  it('is 1 on every draw when the models are far apart, and lower when they are close', () => {
    // 40 items; each model is correct on a range of them.
    const score = (ranges: readonly (readonly [number, number])[]) => (sample: readonly number[]) =>
      new Map(ranges.map(([lo, hi], m) => [`m${m}`, sample.filter((i) => i >= lo && i < hi).length / sample.length]));
    // Nested ranges: every resample keeps the order (unless it misses a whole 10-item band: p ≈ 1e-5).
    const far = bootstrapTauReference(40, score([[0, 10], [0, 20], [0, 30]]), { draws: 50, seed: 7 });
    expect(far.taus.every((t) => t === 1)).toBe(true);
    expect(far.mean).toBe(1);
    // Overlapping ranges of 20, 21 and 22 items: resamples often reorder them.
    const near = bootstrapTauReference(40, score([[0, 20], [1, 22], [3, 25]]), { draws: 200, seed: 7 });
    expect(near.mean!).toBeLessThan(0.9);
    expect(near.lo!).toBeLessThanOrEqual(near.median!);
    expect(near.hi!).toBeGreaterThanOrEqual(near.median!);
  });

  it('is reproducible from its seed', () => {
    const score = (sample: readonly number[]) => new Map([['a', sample.reduce((s, i) => s + (i % 3), 0)], ['b', sample.reduce((s, i) => s + (i % 2), 0)], ['c', sample.length]]);
    expect(bootstrapTauReference(20, score, { draws: 30, seed: 1 }).taus).toEqual(bootstrapTauReference(20, score, { draws: 30, seed: 1 }).taus);
    expect(resampleIndices(5, seededRandom(3)).every((i) => i >= 0 && i < 5)).toBe(true);
  });
});
