/**
 * Residual-profile agreement between readouts (Same Judgment, Different Yes §4: "Median residual correlations among
 * the convergent pairs range from 0.46 to 0.93: agreement retains how individual models depart
 * from the consensus"). For each cell and readout pair, the residual profiles (language consensus
 * over models and cell mean removed, within each readout; profiles.ts) are correlated on the
 * stories both carry; then, per readout pair, the median and 10–90 % range over cells.
 */
import { MIN_COMMON_STORIES } from './estimators.js';
import { profileMatrix } from './profiles.js';
import type { ProfileMatrix } from './profiles.js';
import { median, pearson, quantile } from '../../../api/battery.js';
import type { Readout, ReadoutComparison, ResidualConvergence, ResidualReadoutComparison, StoryScore } from './types.js';

interface Indexed {
  readonly m: ProfileMatrix;
  readonly cell: Map<string, number>;
  readonly story: Map<string, number>;
}

/**
 * Residual r for every (cell, readout pair) in `comparisons` (the per-cell readout comparisons of
 * estimate()), and its distribution over cells per readout pair, in the order pairs first appear.
 */
export function residualReadoutComparisons(
  storyScores: readonly StoryScore[],
  comparisons: readonly Pick<ReadoutComparison, 'model' | 'language' | 'readout_a' | 'readout_b'>[],
  minCommonStories: number = MIN_COMMON_STORIES,
): { cells: ResidualReadoutComparison[]; convergence: ResidualConvergence[] } {
  const byReadout = new Map<Readout, StoryScore[]>();
  for (const s of storyScores) {
    const list = byReadout.get(s.readout) ?? [];
    list.push(s);
    byReadout.set(s.readout, list);
  }
  const matrices = new Map<Readout, Indexed>();
  const matrix = (readout: Readout): Indexed | undefined => {
    let ix = matrices.get(readout);
    const scores = byReadout.get(readout);
    if (ix === undefined && scores) {
      const m = profileMatrix(scores, readout);
      ix = { m, cell: new Map(m.cells.map((c, i) => [`${c.model}\u0000${c.language}`, i])), story: new Map(m.stories.map((s, i) => [s, i])) };
      matrices.set(readout, ix);
    }
    return ix;
  };
  const cells: ResidualReadoutComparison[] = [];
  const groups = new Map<string, { a: Readout; b: Readout; r: number[] }>();
  for (const c of comparisons) {
    const key = `${c.readout_a}\u0000${c.readout_b}`;
    const g = groups.get(key) ?? { a: c.readout_a, b: c.readout_b, r: [] };
    groups.set(key, g);
    const A = matrix(c.readout_a);
    const B = matrix(c.readout_b);
    const ia = A?.cell.get(`${c.model}\u0000${c.language}`);
    const ib = B?.cell.get(`${c.model}\u0000${c.language}`);
    const xs: number[] = [];
    const ys: number[] = [];
    if (A && B && ia !== undefined && ib !== undefined) {
      const na = A.m.stories.length;
      const nb = B.m.stories.length;
      A.m.stories.forEach((story, ka) => {
        const kb = B.story.get(story);
        if (kb === undefined) return;
        const x = A.m.residual[ia * na + ka] as number;
        const y = B.m.residual[ib * nb + kb] as number;
        if (Number.isNaN(x) || Number.isNaN(y)) return;
        xs.push(x);
        ys.push(y);
      });
    }
    const r = xs.length >= minCommonStories ? pearson(xs, ys) : null;
    if (r !== null) g.r.push(r);
    cells.push({ model: c.model, language: c.language, readout_a: c.readout_a, readout_b: c.readout_b, n_common: xs.length, residual_r: r });
  }
  const convergence = [...groups.values()].map(
    (g): ResidualConvergence => ({
      readout_a: g.a,
      readout_b: g.b,
      n_cells: g.r.length,
      median_residual_r: median(g.r),
      q10_residual_r: quantile(g.r, 0.1),
      q90_residual_r: quantile(g.r, 0.9),
    }),
  );
  return { cells, convergence };
}
