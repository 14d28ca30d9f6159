import { NOTICE_KIND } from '../../api/battery.js';
import type { ByoRowsSpec } from '../../api/battery.js';
import { analyzePtrueRows } from './analysis/analyzeRows.js';
import { DEFAULT_DRAWS } from './analysis/ptrueAnalysis.js';
import { BYO_FORMAT, completeReplies, readByoFile } from './byo/index.js';

/** The bootstrap seed of rows brought from elsewhere when none is given (a campaign's default is its own seed). */
const BYO_SEED = 1;

/**
 * P(True) rows collected elsewhere (README "Bring your own rows"): one row per model × item × q ×
 * r × v with the reply's correctness and P(True). A reply missing a verifier copy is a bad row: a
 * dropped copy would silently unbalance the Q × R × V cells the estimators compare.
 */
export const ptrueByo: ByoRowsSpec = {
  kind: 'rows',
  format: `${BYO_FORMAT}; one file`,
  settings: { draws: DEFAULT_DRAWS, seed: BYO_SEED, minDraws: 0 },
  async analyzeRows(target, opts) {
    const { rows: valid, issues } = await readByoFile(target);
    const bad = issues.filter((i) => i.kind !== NOTICE_KIND);
    // Lines that are no row of the analysis; an incomplete reply's copies are valid rows until dropped.
    const badLines = new Set(bad.filter((i) => i.kind !== 'incomplete reply').map((i) => i.path.replace(/:.*$/, ''))).size;
    const rows = completeReplies(valid);
    const summary = { rows: valid.length + badLines, accepted: rows.length, rejected: badLines + valid.length - rows.length, files: 1 };
    // Refused unless bad rows are dropped on request: the bootstrap is then not worth running.
    if (rows.length === 0 || (bad.length > 0 && !opts.dropBadRows)) return { results: undefined, issues, warnings: [], summary };
    const results = analyzePtrueRows(rows, { draws: opts.bootstrap?.draws ?? DEFAULT_DRAWS, seed: opts.bootstrap?.seed ?? BYO_SEED, simulated: false, byo: true });
    return { results, issues, warnings: [], summary };
  },
  describe: (s) => `rows: ${s['accepted']} of ${s['rows']} from 1 file`,
};
