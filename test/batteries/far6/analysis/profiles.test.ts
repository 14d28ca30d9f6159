import { describe, expect, it } from 'vitest';
import { comparePairs, pairClass, pairIndices, profileMatrix, weightedPearson, weightedPearsonAndMeanAbsDiff } from '../../../../lib/batteries/far6/analysis/profiles.js';
import { pearson } from '../../../../lib/metrics/stats.js';
import type { StoryScore } from '../../../../lib/batteries/far6/analysis/types.js';

const R = 'plain/label/rule';

function scores(model: string, language: string, values: readonly (number | null)[], readout = R): StoryScore[] {
  const out: StoryScore[] = [];
  values.forEach((s, k) => {
    if (s === null) return;
    out.push({ model, language, readout, story: `s${k}`, story_group: k % 2 === 0 ? 'contested' : 'violation', s, b: 0, n_pairs: 1 });
  });
  return out;
}

describe('profileMatrix and residual profiles (Same Judgment, Different Yes "Estimation steps")', () => {
  it('removes the language consensus over models, then each cell mean (by hand)', () => {
    // en: consensus [0.3, 0.4, 0.7]; A − consensus = [−0.1, 0, 0.2], mean 1/30.
    const m = profileMatrix([...scores('A', 'en', [0.2, 0.4, 0.9]), ...scores('B', 'en', [0.4, 0.4, 0.5])], R);
    expect(m.cells).toEqual([{ model: 'A', language: 'en' }, { model: 'B', language: 'en' }]);
    expect(m.stories).toEqual(['s0', 's1', 's2']);
    const a = [...m.residual.slice(0, 3)];
    const b = [...m.residual.slice(3, 6)];
    [-0.1 - 1 / 30, -1 / 30, 0.2 - 1 / 30].forEach((v, k) => expect(a[k]).toBeCloseTo(v, 12));
    // With two models the residuals are mirror images: the within-language coupling of §5.
    b.forEach((v, k) => expect(v).toBeCloseTo(-(a[k] as number), 12));
  });

  it('keeps residuals only on stories every model of the language supports', () => {
    const m = profileMatrix([...scores('A', 'en', [0.2, 0.4, 0.9]), ...scores('B', 'en', [0.4, 0.4, null]), ...scores('A', 'de', [0.1, 0.2, 0.3])], R);
    const n = m.stories.length;
    const ci = (model: string, language: string) => m.cells.findIndex((c) => c.model === model && c.language === language);
    // A/en has s on s2, but B/en does not: no residual there.
    expect(m.s[ci('A', 'en') * n + 2]).toBe(0.9);
    expect(m.residual[ci('A', 'en') * n + 2]).toBeNaN();
    // On the support {s0, s1}: consensus [0.3, 0.4], A − consensus = [−0.1, 0], mean −0.05.
    expect(m.residual[ci('A', 'en') * n + 0]).toBeCloseTo(-0.05, 12);
    expect(m.residual[ci('A', 'en') * n + 1]).toBeCloseTo(0.05, 12);
    // A language with one model: every residual is zero, a cell without variance.
    expect([...m.residual.slice(ci('A', 'de') * n, ci('A', 'de') * n + 3)]).toEqual([0, 0, 0]);
  });
});

describe('comparePairs (Same Judgment, Different Yes §3)', () => {
  const x = [0, 1, 0, 1, 0, 1, 0, 1];
  const y = [0, 1, 0, 1, 0, 1, 1, 0];

  it('gives story-level r and mean |Δ| on the common stories (by hand: r = 0.5, |Δ| = 0.25)', () => {
    const m = profileMatrix([...scores('A', 'en', x), ...scores('B', 'de', y)], R);
    const [p] = comparePairs(m, 8);
    expect(p).toMatchObject({ model_a: 'A', language_a: 'en', model_b: 'B', language_b: 'de', class: 'both_differ', n_common: 8 });
    // dx, dy = ±½: Sxy = 6·¼ − 2·¼ = 1, Sxx = Syy = 2.
    expect(p?.r).toBeCloseTo(0.5, 12);
    expect(p?.mean_abs_diff).toBeCloseTo(0.25, 12);
    // One model per language: residuals are all zero, so no residual r.
    expect(p?.n_common_residual).toBe(8);
    expect(p?.residual_r).toBeNull();
  });

  it('reports nothing but the count below eight common stories', () => {
    const m = profileMatrix([...scores('A', 'en', x), ...scores('B', 'en', [...y.slice(0, 7), null])], R);
    const [p] = comparePairs(m, 8);
    expect(p).toMatchObject({ class: 'same_language', n_common: 7, r: null, mean_abs_diff: null, residual_r: null });
    expect(comparePairs(m, 7)[0]?.r).not.toBeNull();
  });

  it('gives no r for a cell without variance, but still its mean |Δ|', () => {
    const m = profileMatrix([...scores('A', 'en', x), ...scores('A', 'de', Array(8).fill(0.5))], R);
    const [p] = comparePairs(m, 8);
    expect(p).toMatchObject({ class: 'same_model', r: null, mean_abs_diff: 0.5 });
  });

  it('computes residual r across languages on the residual profiles', () => {
    // Two models in two languages; A's departures from B are the same in both languages.
    const base = [0.1, 0.9, 0.3, 0.7, 0.5, 0.2, 0.8, 0.4, 0.6];
    const dev = [0.05, -0.05, 0.1, 0, -0.1, 0.05, 0, -0.05, 0];
    const rows = [
      ...scores('A', 'en', base.map((v, k) => v + (dev[k] as number))),
      ...scores('B', 'en', base),
      ...scores('A', 'de', base.map((v, k) => 0.9 * v + (dev[k] as number))),
      ...scores('B', 'de', base.map((v) => 0.9 * v)),
    ];
    const pairs = comparePairs(profileMatrix(rows, R), 8);
    const same = pairs.find((p) => p.model_a === 'A' && p.language_a === 'de' && p.model_b === 'A' && p.language_b === 'en');
    const cross = pairs.find((p) => p.model_a === 'A' && p.language_a === 'de' && p.model_b === 'B' && p.language_b === 'en');
    // Residual of A = dev/2 − mean, of B = −dev/2 − mean, in both languages.
    expect(same?.residual_r).toBeCloseTo(1, 12);
    expect(cross?.residual_r).toBeCloseTo(-1, 12);
    expect(same?.r).toBeLessThan(1);
  });
});

describe('weighted kernels', () => {
  it('equal the plain statistics on data with each story repeated by its weight', () => {
    const a = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.6, 0.8, 0.4, 0.05];
    const b = [0.2, 0.4, 0.7, 0.5, 0.9, 0.1, 0.3, 0.6, 0.5, 0.2];
    const w = Float64Array.from([0, 2, 1, 3, 0, 1, 1, 0, 2, 1]);
    const values = Float64Array.from([...a, ...b]);
    const idx = Int32Array.from(a.map((_, k) => k));
    const xs: number[] = [];
    const ys: number[] = [];
    let absSum = 0;
    a.forEach((v, k) => {
      for (let c = 0; c < (w[k] as number); c++) {
        xs.push(v);
        ys.push(b[k] as number);
        absSum += Math.abs(v - (b[k] as number));
      }
    });
    expect(weightedPearson(values, 10, 0, 1, idx, w, 8)).toBeCloseTo(pearson(xs, ys) as number, 12);
    const both = new Float64Array(2);
    weightedPearsonAndMeanAbsDiff(values, 10, 0, 1, idx, w, 8, both);
    expect(both[1]).toBeCloseTo(absSum / xs.length, 12);
    // The minimum counts stories with their multiplicity: 11 here.
    expect(weightedPearson(values, 10, 0, 1, idx, w, 12)).toBeNull();
  });

  it('give, bit for bit, the two-pass weighted r and the weighted mean |Δ| computed one statistic at a time (weightedPearsonAndMeanAbsDiff, the bootstrap\'s, shares their first pass)', () => {
    // The textbook computations, each on its own: sums in story order, then deviations from the means.
    const reference = (values: Float64Array, n: number, a: number, b: number, idx: Int32Array, w: Float64Array | null, minCommon: number) => {
      const ks = [...idx].filter((k) => (w === null ? 1 : (w[k] as number)) !== 0);
      const wt = (k: number): number => (w === null ? 1 : (w[k] as number));
      const x = (k: number): number => values[a * n + k] as number;
      const y = (k: number): number => values[b * n + k] as number;
      let sw = 0;
      let sad = 0;
      for (const k of ks) {
        sw += wt(k);
        sad += wt(k) * Math.abs(x(k) - y(k));
      }
      const d = sw < minCommon || sw === 0 ? null : sad / sw;
      if (sw < minCommon || sw < 2) return { r: null, d };
      let sx = 0;
      let sy = 0;
      for (const k of ks) {
        sx += wt(k) * x(k);
        sy += wt(k) * y(k);
      }
      const mx = sx / sw;
      const my = sy / sw;
      let sxx = 0;
      let syy = 0;
      let sxy = 0;
      for (const k of ks) {
        sxx += wt(k) * (x(k) - mx) * (x(k) - mx);
        syy += wt(k) * (y(k) - my) * (y(k) - my);
        sxy += wt(k) * (x(k) - mx) * (y(k) - my);
      }
      const eps = sw * (Number.EPSILON * Math.max(1, Math.abs(mx), Math.abs(my))) ** 2;
      if (sxx <= eps || syy <= eps) return { r: null, d };
      const r = sxy / Math.sqrt(sxx * syy);
      return { r: Math.min(1, Math.max(-1, r)), d };
    };
    // Seeded draws: bootstrap-like weights with zeros, a subset of stories, every minimum in reach.
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const n = 40;
    const out = new Float64Array(2);
    let nulls = 0;
    for (let t = 0; t < 300; t++) {
      const values = Float64Array.from({ length: 3 * n }, () => (t % 17 === 0 ? 0.5 : rand()));
      const idx = Int32Array.from(Array.from({ length: n }, (_, k) => k).filter(() => rand() < 0.8));
      const w = t % 5 === 0 ? null : Float64Array.from({ length: n }, () => Math.floor(rand() * 3));
      const [a, b, minCommon] = [t % 3, (t + 1) % 3, 2 + (t % 40)];
      const want = reference(values, n, a, b, idx, w, minCommon);
      weightedPearsonAndMeanAbsDiff(values, n, a, b, idx, w, minCommon, out);
      expect([out[0], out[1]]).toEqual([want.r ?? Number.NaN, want.d ?? Number.NaN]);
      expect(weightedPearson(values, n, a, b, idx, w, minCommon)).toBe(want.r);
      if (want.r === null) nulls++;
    }
    // Both branches were taken: some pairs had too few stories or no variance, most had an r.
    expect(nulls).toBeGreaterThan(10);
    expect(nulls).toBeLessThan(290);
  });

  it('classes pairs by what changes', () => {
    expect(pairClass({ model: 'a', language: 'en' }, { model: 'a', language: 'de' })).toBe('same_model');
    expect(pairClass({ model: 'a', language: 'en' }, { model: 'b', language: 'en' })).toBe('same_language');
    expect(pairClass({ model: 'a', language: 'en' }, { model: 'b', language: 'de' })).toBe('both_differ');
    const m = profileMatrix([...scores('A', 'en', [0.1, 0.2]), ...scores('A', 'de', [0.1]), ...scores('B', 'en', [0.3, 0.4])], R);
    expect(pairIndices(m).map((p) => [p.a, p.b, p.common.length])).toEqual([[0, 1, 1], [0, 2, 1], [1, 2, 2]]);
  });
});
