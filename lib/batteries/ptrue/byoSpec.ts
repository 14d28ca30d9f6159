import type { ByoRowsSpec } from '../../battery/types.js';
import { DEFAULT_DRAWS } from './analysis/ptrueAnalysis.js';
import { analyzeByoFile, BYO_FORMAT } from './byo/index.js';

/**
 * P(True) rows collected elsewhere (README "Bring your own rows"): one row per model × item × q ×
 * r × v with the reply's correctness and P(True). Unlike FAR-6 and X-Value, a file with any bad
 * row is refused whole, every problem listed: a dropped verifier copy would silently unbalance the
 * Q × R × V cells the estimators compare.
 */
export const ptrueByo: ByoRowsSpec = {
  kind: 'rows',
  format: `${BYO_FORMAT}; one file, refused whole if any row is bad`,
  async analyzeRows(target) {
    const results = await analyzeByoFile(target, { draws: DEFAULT_DRAWS, seed: 1 });
    return { results, issues: [], warnings: [], summary: { rows: results.rows, files: 1 } };
  },
  describe: (s) => `rows: ${s['rows']} from 1 file`,
};
