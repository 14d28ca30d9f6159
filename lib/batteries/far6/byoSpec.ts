import type { ByoTablesSpec } from '../../api/battery.js';
import { BOOTSTRAP_DRAWS, BOOTSTRAP_SEED } from './analysis/identity.js';
import { importReplies } from './byo/analyzeReplies.js';

/**
 * FAR-6 replies collected elsewhere (README "Bring your own replies"): one row per reply with its
 * design factors and, optionally, its readings (schema/replies.schema.json); the token rule reads
 * the rows that give none. The rows stand for the generate phase. Items a model lacks in one of
 * its languages are listed as missing cells.
 */
export const far6Byo: ByoTablesSpec = {
  kind: 'tables',
  format: 'JSONL, CSV or Parquet rows: model, language, the nine FAR-6 factors, text, optional readings (schema/replies.schema.json)',
  settings: { draws: BOOTSTRAP_DRAWS, seed: BOOTSTRAP_SEED, minDraws: 1 },
  async importReplies(target, opts) {
    const imported = await importReplies(target, opts);
    return { campaign: opts.campaign ?? 'byo', phases: ['generate'], issues: [...imported.issues, ...imported.missingCells], warnings: imported.warnings, summary: { ...imported.summary } };
  },
  describe: (s) =>
    `replies: ${s['accepted']} of ${s['rows']} rows from ${s['files']} file${s['files'] === 1 ? '' : 's'}; ` +
    `readings: ${s['readingsGiven']} given, ${s['readingsComputed']} by the token rule`,
};
