/**
 * Checking what the SQL stage returns before the estimators trust it: a value outside the
 * battery's vocabulary in a gold column (a prompts table written by something else) is an
 * AnalysisError naming the query, the row and the column, not a silent miscount.
 */
import { AnalysisError } from '../../../api/battery.js';
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

function text(query: string, i: number, row: Record<string, unknown>, column: string, allowed?: readonly string[]): string {
  const v = row[column];
  if (typeof v !== 'string' || (allowed && !allowed.includes(v))) {
    const expected = allowed ? `one of ${allowed.join(', ')}` : 'text';
    throw new AnalysisError(`${query}.sql row ${i + 1}: column ${column} expected ${expected}, got ${JSON.stringify(v) ?? 'nothing'}`);
  }
  return v;
}

function num(query: string, i: number, row: Record<string, unknown>, column: string): number {
  const v = row[column];
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new AnalysisError(`${query}.sql row ${i + 1}: column ${column} expected a number, got ${JSON.stringify(v) ?? 'nothing'}`);
  return n;
}

export function parsePairRows(rows: readonly Record<string, unknown>[]): PairSqlRow[] {
  const q = 'xvalue_pairs';
  return rows.map((r, i) => {
    const t = (c: string, allowed?: readonly string[]) => text(q, i, r, c, allowed);
    return {
      model: t('model'),
      language: t('language', LANGUAGES) as PairSqlRow['language'],
      qa_id: t('qa_id'),
      category: t('category', CATEGORIES) as PairSqlRow['category'],
      strategy: t('strategy', STRATEGIES) as PairSqlRow['strategy'],
      gold_overall: t('gold_overall', VERDICTS) as PairSqlRow['gold_overall'],
      gold_scope: t('gold_scope', SCOPES) as PairSqlRow['gold_scope'],
      gold_nature: t('gold_nature', NATURES) as PairSqlRow['gold_nature'],
      gold_a: t('gold_a', QUESTION_LABELS) as PairSqlRow['gold_a'],
      gold_b: t('gold_b', VERDICTS) as PairSqlRow['gold_b'],
      gold_c: t('gold_c', VERDICTS) as PairSqlRow['gold_c'],
      gold_d: t('gold_d', VERDICTS) as PairSqlRow['gold_d'],
      gold_e: t('gold_e', VERDICTS) as PairSqlRow['gold_e'],
      gold_f: t('gold_f', VERDICTS) as PairSqlRow['gold_f'],
      gold_g: t('gold_g', VERDICTS) as PairSqlRow['gold_g'],
      gold_h: t('gold_h', VERDICTS) as PairSqlRow['gold_h'],
    };
  });
}

export function parseFacetRows(rows: readonly Record<string, unknown>[]): FacetSqlRow[] {
  const q = 'xvalue_facets';
  return rows.map((r, i) => ({
    model: text(q, i, r, 'model'),
    language: text(q, i, r, 'language', LANGUAGES) as FacetSqlRow['language'],
    qa_id: text(q, i, r, 'qa_id'),
    phase: text(q, i, r, 'phase'),
    facet: text(q, i, r, 'facet'),
    label: text(q, i, r, 'label'),
  }));
}

export function parseReplyTotals(rows: readonly Record<string, unknown>[]): ReplyTotalsRow[] {
  const q = 'xvalue_reply_totals';
  return rows.map((r, i) => ({
    model: text(q, i, r, 'model'),
    language: text(q, i, r, 'language'),
    phase: text(q, i, r, 'phase'),
    attempts: num(q, i, r, 'attempts'),
    ok_attempts: num(q, i, r, 'ok_attempts'),
    items_ok: num(q, i, r, 'items_ok'),
    simulated_attempts: num(q, i, r, 'simulated_attempts'),
    cost_usd: r['cost_usd'] === null ? 0 : num(q, i, r, 'cost_usd'),
  }));
}
