import { missingCells } from '../../api/battery.js';
import type { ByoIssue, ByoRowsSpec, FileIssue } from '../../api/battery.js';
import { analyzeXvalueRows } from './analysis/estimators.js';
import type { XvalueCampaignResults } from './analysis/runAnalysis.js';
import { byoToRows, findByoFiles, readByoFiles, XVALUE_BYO_FORMAT } from './byo/index.js';
import { loadQaPairs } from './data/loadQaPairs.js';

/** Pairs a model has under one strategy and not under another it has: a cell of the design the rows claim with no row. */
function missingStrategies(target: string, verdicts: readonly { model: string; qa_id: string; strategy: string }[]): ByoIssue[] {
  return missingCells(verdicts.map((v) => [v.model, v.qa_id, v.strategy] as const)).map((m) => ({
    file: target,
    path: '',
    kind: 'missing cell' as const,
    message: `model ${m.group}: pair ${m.unit} has no verdict under ${m.missing.join(', ')} (the model has verdicts under ${m.present.join(', ')})`,
  }));
}

function line(w: FileIssue): string {
  return `${w.file}${w.path ? `: ${w.path}` : ''}: ${w.message}`;
}

/**
 * X-Value verdicts collected elsewhere (README "Bring your own verdicts"): one row per model × QA
 * pair × strategy, scored against the gold annotations of the QA pairs given with
 * `--input qa_pairs=FILE`, by the same estimators as a run. A pair a model has under one strategy
 * and not the other is a missing cell (the strategies would compare different pairs).
 */
export const xvalueByo: ByoRowsSpec = {
  kind: 'rows',
  format: XVALUE_BYO_FORMAT,
  inputs: { qa_pairs: { required: true, description: 'the QA pairs file (.jsonl or .csv) the verdicts are scored against (their gold annotations)' } },
  async analyzeRows(target, opts) {
    const { pairs, warnings: pairWarnings } = await loadQaPairs([opts.inputs['qa_pairs']!]);
    const files = await findByoFiles(target);
    const read = await readByoFiles(files);
    const byo = byoToRows(read.rows, pairs);
    const results: XvalueCampaignResults = { ...analyzeXvalueRows(byo.rows, { simulated: false }), replyTotals: [] };
    const issues = [...read.issues, ...byo.issues, ...missingStrategies(target, byo.rows.verdicts)];
    return {
      results,
      issues,
      warnings: [...pairWarnings, ...byo.warnings].map(line),
      summary: { files: files.length, rows: read.rows.length + read.issues.length, accepted: byo.accepted, rejected: byo.rejected + read.issues.length, pairs: pairs.length },
    };
  },
  describe: (s) => `verdicts: ${s['accepted']} of ${s['rows']} rows from ${s['files']} file${s['files'] === 1 ? '' : 's'}, scored against ${s['pairs']} QA pairs`,
};
