/**
 * Checking what the SQL stage returns before the estimators trust it: a value outside the
 * battery's vocabulary in a gold column (a prompts table written by something else) is an error
 * naming the query, the row and the column (lib/query's RowReader, as FAR-6 reads its rows), not a
 * silent miscount.
 */
import { RowReader } from '../../../api/battery.js';
import { CATEGORIES, LANGUAGES, NATURES, QUESTION_LABELS, SCOPES, STRATEGIES, VERDICTS } from '../types.js';
import type { FacetSqlRow, PairSqlRow } from './types.js';

/** Reply totals per model x language x phase (xvalue_reply_totals.sql). */
export interface ReplyTotalsRow {
  readonly model: string;
  readonly language: string;
  readonly phase: string;
  readonly attempts: number;
  readonly ok_attempts: number;
  readonly items_ok: number;
  readonly simulated_attempts: number;
  readonly cost_usd: number;
}

/** The gold verdicts of rubric steps 2–3 (B–H): the same vocabulary, read the same way. */
const VERDICT_COLUMNS = ['gold_b', 'gold_c', 'gold_d', 'gold_e', 'gold_f', 'gold_g', 'gold_h'] as const;

export function parsePairRows(rows: readonly Record<string, unknown>[]): PairSqlRow[] {
  return RowReader.readRows('xvalue_pairs.sql', rows, (rd, r, i) => ({
    model: rd.string(r, i, 'model'),
    language: rd.oneOf(r, i, 'language', LANGUAGES),
    qa_id: rd.string(r, i, 'qa_id'),
    category: rd.oneOf(r, i, 'category', CATEGORIES),
    strategy: rd.oneOf(r, i, 'strategy', STRATEGIES),
    gold_overall: rd.oneOf(r, i, 'gold_overall', VERDICTS),
    gold_scope: rd.oneOf(r, i, 'gold_scope', SCOPES),
    gold_nature: rd.oneOf(r, i, 'gold_nature', NATURES),
    gold_a: rd.oneOf(r, i, 'gold_a', QUESTION_LABELS),
    ...(Object.fromEntries(VERDICT_COLUMNS.map((c) => [c, rd.oneOf(r, i, c, VERDICTS)])) as Pick<PairSqlRow, (typeof VERDICT_COLUMNS)[number]>),
  }));
}

export function parseFacetRows(rows: readonly Record<string, unknown>[]): FacetSqlRow[] {
  return RowReader.readRows('xvalue_facets.sql', rows, (rd, r, i) => ({
    model: rd.string(r, i, 'model'),
    language: rd.oneOf(r, i, 'language', LANGUAGES),
    qa_id: rd.string(r, i, 'qa_id'),
    phase: rd.string(r, i, 'phase'),
    facet: rd.string(r, i, 'facet'),
    label: rd.string(r, i, 'label'),
  }));
}

export function parseReplyTotals(rows: readonly Record<string, unknown>[]): ReplyTotalsRow[] {
  return RowReader.readRows('xvalue_reply_totals.sql', rows, (rd, r, i) => ({
    model: rd.string(r, i, 'model'),
    language: rd.string(r, i, 'language'),
    phase: rd.string(r, i, 'phase'),
    attempts: rd.number(r, i, 'attempts'),
    ok_attempts: rd.number(r, i, 'ok_attempts'),
    items_ok: rd.number(r, i, 'items_ok'),
    simulated_attempts: rd.number(r, i, 'simulated_attempts'),
    // A phase whose replies all failed sums no cost: SQL's SUM over nothing is null.
    cost_usd: r['cost_usd'] === null ? 0 : rd.number(r, i, 'cost_usd'),
  }));
}
