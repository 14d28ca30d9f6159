/**
 * The X-Value SQL stage and estimators over a campaign's tables (BatteryAnalysis.run): the three
 * queries run one after another on one connection, their rows are checked, turned into
 * item-level rows and analysed.
 */
import type { AnalysisSources, Queryable, SourceMap, SqlLibrary } from '../../../api/battery.js';
import { PHASES } from '../types.js';
import { buildRows } from './buildRows.js';
import { analyzeXvalueRows } from './estimators.js';
import type { AnalyzeOptions } from './estimators.js';
import { parseFacetRows, parsePairRows, parseReplyTotals } from './parseSqlRows.js';
import type { ReplyTotalsRow } from './parseSqlRows.js';
import type { XvalueResults } from './types.js';

export interface XvalueCampaignResults extends XvalueResults {
  readonly replyTotals: readonly ReplyTotalsRow[];
}

/** The campaign tables over the given phases, as the queries' placeholders take them. */
export function xvalueTables(sources: AnalysisSources, phases: readonly string[] = PHASES): SourceMap {
  return { prompts: sources.table('prompts', phases), replies: sources.table('replies', phases), readings: sources.table('readings', phases) };
}

/**
 * The phases that stored prompts (a def-only campaign has no rubric phases); all of them when
 * none has, so the queries still run and return nothing.
 */
export async function storedPhases(sources: AnalysisSources): Promise<string[]> {
  const present: string[] = [];
  for (const phase of PHASES) if (await sources.has('prompts', phase)) present.push(phase);
  return present.length > 0 ? present : [...PHASES];
}

/**
 * Runs the queries on `tables` and every estimator.
 * @example const results = await runXvalueAnalysis(db, XVALUE_SQL, xvalueTables(sources))
 */
export async function runXvalueAnalysis(db: Queryable, sql: SqlLibrary, tables: SourceMap, options: AnalyzeOptions = {}): Promise<XvalueCampaignResults> {
  const pairs = parsePairRows(await sql.run(db, 'xvalue_pairs', tables));
  const facets = parseFacetRows(await sql.run(db, 'xvalue_facets', tables));
  const replyTotals = parseReplyTotals(await sql.run(db, 'xvalue_reply_totals', tables));
  const simulated = options.simulated ?? replyTotals.some((t) => t.simulated_attempts > 0);
  return { ...analyzeXvalueRows(buildRows(pairs, facets), { ...options, simulated }), replyTotals };
}
