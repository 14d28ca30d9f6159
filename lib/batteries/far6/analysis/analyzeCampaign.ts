/**
 * The first part of the FAR-6 analysis (Same Judgment, Different Yes §3, §4, §6, "Estimation steps"): the portable SQL
 * stage aggregates replies to item level, the TypeScript estimators do the rest.
 */
import { agreementAnalysis, parseAgreementRows } from './agreement.js';
import { estimate } from './estimators.js';
import { habitAnalysis } from './habits.js';
import { identityAnalysis } from './identity.js';
import { judgeAuditAnalysis, runJudgeAudit } from './judgeAudit.js';
import { parseItemShareRows, parseLabelMaps, parseReplyTotalsRows } from './parseRows.js';
import { residualReadoutComparisons } from './readoutResiduals.js';
import { FAR6_SQL } from '../sqlLibrary.js';
import { sameRepliesAnalysis } from './sameReplies.js';
import { summarizeCells } from './summarizeCells.js';
import type { Proposition } from '../types.js';
import type { AnalysisResults, EstimateOptions, IdentityOptions, Queryable, TableSources } from './types.js';

export type AnalyzeOptions = EstimateOptions &
  IdentityOptions & {
    /**
     * The judge audit (Same Judgment, Different Yes "Sentence judging"): a readings source holding the generate-phase
     * readings and the audit phases' readings together (their `phase` column tells them apart),
     * and the primary judge's reader where the generate readings hold more than one judge.
     */
    readonly judgeAudit?: { readonly readings: string; readonly primaryReader?: string };
  };

/**
 * Runs the SQL stage on `db` (label_maps, item_shares, reply_totals) and the estimators on its
 * rows: story scores and habits per cell, then profiles across cells, model identity and habit
 * variance. The queries run one after another: a single DuckDB connection does not run two at once.
 * @example
 * const tables = { prompts: parquetSource(`${dir}/prompts/** /*.parquet`), replies: …, readings: … };
 * const results = await analyzeCampaign(db, tables);
 */
export async function analyzeCampaign(db: Queryable, tables: TableSources, opts: AnalyzeOptions = {}): Promise<AnalysisResults> {
  const labelMaps = parseLabelMaps(await FAR6_SQL.run(db, 'label_maps', tables));
  const { estimates, cellSummary, itemRows, agreementRows } = await perCell(db, tables, labelMaps, opts);
  const replyTotals = parseReplyTotalsRows(await FAR6_SQL.run(db, 'reply_totals', tables));
  // After perCell, so that its item rows can be freed before these rows arrive; DuckDB runs the
  // query while identity's bootstrap (seconds at full size) runs here.
  const sameRows = await FAR6_SQL.start(db, 'same_replies_shares', tables);
  const residual = residualReadoutComparisons(estimates.storyScores, estimates.comparisons, estimates.minCommonStories);
  // Same Judgment, Different Yes §5 and §6: across cells, on the story scores and habits just estimated.
  const identity = identityAnalysis(estimates.storyScores, { ...opts, minCommonStories: estimates.minCommonStories });
  const habits = habitAnalysis(estimates.cellHabits);
  const sameReplies = sameRepliesAnalysis(parseItemShareRows(await sameRows(), labelMaps, 'same_replies_shares.sql'), opts.minCommonStories);
  const audit = opts.judgeAudit;
  const judgeAudit = audit
    ? judgeAuditAnalysis(await runJudgeAudit(db, { ...tables, readings: audit.readings }), audit.primaryReader ? { primaryReader: audit.primaryReader } : {})
    : undefined;
  return {
    ...estimates,
    cellSummary,
    replyTotals,
    itemRows,
    simulated: replyTotals.some((t) => t.simulated_attempts > 0),
    identity,
    habits,
    agreement: agreementAnalysis(agreementRows),
    residualComparisons: residual.cells,
    residualConvergence: residual.convergence,
    sameReplies,
    ...(judgeAudit ? { judgeAudit } : {}),
  };
}

/**
 * item_shares.sql and what is computed from its rows; the rows themselves do not outlive the call.
 * reading_agreement.sql (a few thousand rows) runs in DuckDB while the estimators run here.
 */
async function perCell(db: Queryable, tables: TableSources, labelMaps: ReadonlyMap<string, Proposition>, opts: AnalyzeOptions) {
  const rows = parseItemShareRows(await FAR6_SQL.run(db, 'item_shares', tables), labelMaps);
  const agreement = await FAR6_SQL.start(db, 'reading_agreement', tables);
  // cell_summary.sql gives the same rows (tested); computing them here spares a second item_shares pass.
  const computed = { estimates: estimate(rows, opts), cellSummary: summarizeCells(rows), itemRows: rows.length };
  return { ...computed, agreementRows: parseAgreementRows(await agreement()) };
}
