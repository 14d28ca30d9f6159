import { describe, expect, it } from 'vitest';
import { BootstrapPairs } from '../../../../lib/batteries/far6/analysis/bootstrapPairs.js';
import { pairIndices, profileMatrix, weightedPearson, weightedPearsonAndMeanAbsDiff } from '../../../../lib/batteries/far6/analysis/profiles.js';
import { seededRandom } from '../../../../lib/api/battery.js';
import type { StoryScore } from '../../../../lib/batteries/far6/analysis/types.js';

const R = 'plain/label/rule';

/**
 * Cells of 4 models × 3 languages over 40 stories, some scores missing (so that pairs differ in
 * their common stories), one cell constant (no variance) and one with a story or two only.
 */
function matrix() {
  const rng = seededRandom(7);
  const scores: StoryScore[] = [];
  for (const model of ['A', 'B', 'C', 'D']) {
    for (const language of ['de', 'en', 'fr']) {
      for (let k = 0; k < 40; k++) {
        if (model === 'C' && language === 'fr' && k > 1) continue;
        if (model === 'B' && k % 7 === 3) continue;
        if (language === 'de' && k % 11 === 5 && model !== 'A') continue;
        const s = model === 'D' && language === 'en' ? 0.5 : Math.round(rng() * 1000) / 1000;
        scores.push({ model, language, readout: R, story: `s${String(k).padStart(2, '0')}`, story_group: k % 3 === 0 ? 'contested' : 'violation', s, b: 0, n_pairs: 1 });
      }
    }
  }
  return profileMatrix(scores, R);
}

/** The same doubles as the kernels, NaN and all (Object.is tells 0 from −0 and NaN from NaN). */
function expectSame(actual: number, expected: number): void {
  expect(Object.is(actual, expected) || (Number.isNaN(actual) && Number.isNaN(expected))).toBe(true);
  if (!Number.isNaN(expected)) expect(actual.toString()).toBe(expected.toString());
}

describe('BootstrapPairs: the story bootstrap’s pair statistics', () => {
  it('gives weightedPearson’s and weightedPearsonAndMeanAbsDiff’s doubles, bit for bit, in every draw', () => {
    const m = matrix();
    const n = m.stories.length;
    const mask = Uint8Array.from(m.storyGroups, (g) => (g === 'contested' ? 1 : 0));
    const rng = seededRandom(11);
    for (const pairs of [pairIndices(m), pairIndices(m, mask)]) {
      const b = new BootstrapPairs(m, pairs);
      const both = new Float64Array(2);
      let compared = 0;
      const weights: (Float64Array | null)[] = [null];
      for (let d = 0; d < 20; d++) {
        const w = new Float64Array(n);
        for (let i = 0; i < n; i++) {
          const k = Math.floor(rng() * n);
          w[k] = (w[k] as number) + 1;
        }
        weights.push(w);
      }
      for (const w of weights) {
        b.prepare(w);
        pairs.forEach((p, i) => {
          for (const minCommon of [2, 8]) {
            const v = b.compute(i, minCommon);
            weightedPearsonAndMeanAbsDiff(m.s, n, p.a, p.b, p.common, w, minCommon, both);
            expectSame(v[0] as number, weightedPearson(m.residual, n, p.a, p.b, p.commonResidual, w, minCommon) ?? Number.NaN);
            expectSame(v[1] as number, both[0] as number);
            expectSame(v[2] as number, both[1] as number);
            compared += 1;
          }
        });
      }
      expect(compared).toBe(21 * pairs.length * 2);
    }
  });

  it('covers pairs with and without an r (too few stories, no variance) in the fixture', () => {
    const m = matrix();
    const b = new BootstrapPairs(m, pairIndices(m));
    b.prepare(null);
    const rs = pairIndices(m).map((_, i) => b.compute(i, 8)[1] as number);
    expect(rs.some(Number.isNaN)).toBe(true);
    expect(rs.some((r) => !Number.isNaN(r))).toBe(true);
  });
});
