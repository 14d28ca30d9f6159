import { describe, expect, it } from 'vitest';
import { residualReadoutComparisons } from '../../../../lib/batteries/far6/analysis/readoutResiduals.js';
import type { StoryScore } from '../../../../lib/batteries/far6/analysis/types.js';

function scores(model: string, language: string, readout: string, values: readonly number[]): StoryScore[] {
  return values.map((s, k) => ({ model, language, readout, story: `s${k}`, story_group: 'contested', s, b: 0, n_pairs: 1 }));
}

describe('residualReadoutComparisons (Same Judgment, Different Yes §4)', () => {
  // Two models in en: A = base + d/2, B = base − d/2, so A's residual is d/2 minus its mean.
  const base = [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.5];
  const dX = [1, -1, 1, -1, 0, 0, 1, -1].map((v) => v * 0.1);
  const dY = [1, -1, 1, -1, 0, 0, -1, 1].map((v) => v * 0.1);
  const cell = (d: number[], sign: number) => base.map((v, k) => v + (sign * (d[k] as number)) / 2);
  const rows = [
    ...scores('A', 'en', 'X', cell(dX, 1)),
    ...scores('B', 'en', 'X', cell(dX, -1)),
    ...scores('A', 'en', 'Y', cell(dY, 1).map((v) => 0.8 * v)),
    ...scores('B', 'en', 'Y', cell(dY, -1).map((v) => 0.8 * v)),
    ...scores('A', 'de', 'X', base),
    ...scores('A', 'de', 'Y', base),
  ];
  const comparisons = [
    { model: 'A', language: 'en', readout_a: 'X', readout_b: 'Y' },
    { model: 'B', language: 'en', readout_a: 'X', readout_b: 'Y' },
    { model: 'A', language: 'de', readout_a: 'X', readout_b: 'Y' },
  ];

  it('correlates the residual profiles of one cell under two readouts (by hand: r = 2/6)', () => {
    const { cells, convergence } = residualReadoutComparisons(rows, comparisons, 8);
    expect(cells[0]).toMatchObject({ model: 'A', language: 'en', n_common: 8 });
    expect(cells[0]?.residual_r).toBeCloseTo(1 / 3, 12);
    expect(cells[1]?.residual_r).toBeCloseTo(1 / 3, 12);
    // One model in de: its residuals are zero, a cell without variance.
    expect(cells[2]).toMatchObject({ n_common: 8, residual_r: null });
    expect(convergence).toHaveLength(1);
    expect(convergence[0]).toMatchObject({ readout_a: 'X', readout_b: 'Y', n_cells: 2 });
    expect(convergence[0]?.median_residual_r).toBeCloseTo(1 / 3, 12);
  });

  it('needs the minimum of common stories, and a readout the cell has', () => {
    const { cells } = residualReadoutComparisons(rows, [...comparisons, { model: 'A', language: 'en', readout_a: 'X', readout_b: 'Z' }], 9);
    expect(cells.map((c) => c.residual_r)).toEqual([null, null, null, null]);
    expect(cells[3]?.n_common).toBe(0);
  });
});
