/**
 * The work the P(True) estimators share at the paper's size must not change what they give: the
 * configuration decompositions of several metrics from one grouping of the rows, and the rank
 * bootstrap's resamples scored once for every metric (ranks.ts EnglishUnits).
 */
import { describe, expect, it } from 'vitest';
import { configurationDecomposition, configurationDecompositions } from '../../../lib/batteries/ptrue/analysis/decomposition.js';
import { configurationCells } from '../../../lib/batteries/ptrue/analysis/cells.js';
import { englishUnits, rankAnalysis } from '../../../lib/batteries/ptrue/analysis/ranks.js';
import { METRICS, type PtrueRow } from '../../../lib/batteries/ptrue/analysis/types.js';

const LANGS = ['en', 'fr', 'ko'];

/** Rows of four models on one benchmark with strata, drawn from a fixed generator. */
function rows(): PtrueRow[] {
  let s = 11;
  const rand = (): number => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const out: PtrueRow[] = [];
  for (const model of ['a', 'b', 'c', 'd']) {
    for (let i = 0; i < 12; i++) {
      for (const q of LANGS) {
        for (const r of LANGS) {
          const correct = rand() < 0.3 + 0.1 * i;
          for (const v of LANGS) {
            const p_true = rand() < 0.05 ? null : Math.min(1, Math.max(0, (correct ? 0.2 : 0) + rand() * 0.8));
            out.push({ model, benchmark: 'lsqa', base_item: `b${i}`, stratum: `s${i % 3}`, content_language: 'ko', q, r, v, correct, p_true });
          }
        }
      }
    }
  }
  return out;
}

describe('the estimators share work without changing their outputs', () => {
  const all = rows();

  it('configurationDecompositions gives configurationDecomposition of each metric, with and without strata', () => {
    for (const stratum of [true, false]) {
      const metrics = ['auroc', 'ece', 'brier'] as const;
      const together = configurationDecompositions('lsqa', all, metrics, { stratum });
      expect(together).toEqual(metrics.map((m) => configurationDecomposition('lsqa', all, m, { stratum })));
      // ECE is defined in every cell, so each model has a complete table to decompose.
      expect(together[1]!.perModel.every((m) => m.decomposition !== null)).toBe(true);
    }
  });

  it('rankAnalysis gives the same with the units shared across metrics as with its own', () => {
    const cells = configurationCells(all);
    const units = englishUnits(all, 'lsqa', 'en');
    for (const metric of METRICS) {
      const shared = rankAnalysis(all, cells, 'lsqa', metric, { draws: 40, seed: 5, units });
      expect(shared).toEqual(rankAnalysis(all, cells, 'lsqa', metric, { draws: 40, seed: 5 }));
    }
    // Every metric and both bootstraps drew the same 40 resamples, besides every item once.
    expect(units.scored.size).toBe(41);
  });
});
