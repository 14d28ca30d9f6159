/** Rows of sql/ptrue_rows.sql as PtrueRows (DuckDB and Athena return numbers, bigints or strings). */
import type { PtrueRow } from './types.js';

const num = (v: unknown): number | null => (v === null || v === undefined || v === '' ? null : typeof v === 'bigint' ? Number(v) : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const bool = (v: unknown): boolean | null => (v === null || v === undefined || v === '' ? null : v === true || v === 1 || v === '1' || v === 'true' || (typeof v === 'bigint' && v === 1n));

/** Converts query rows; a row missing a key column is a programming mistake and throws. */
export function parsePtrueRows(raw: readonly Record<string, unknown>[]): PtrueRow[] {
  return raw.map((r, i) => {
    for (const k of ['model', 'benchmark', 'base_item', 'q', 'r', 'v']) {
      if (r[k] === null || r[k] === undefined) throw new RangeError(`ptrue_rows: row ${i} has no ${k}`);
    }
    const p = num(r.p_true);
    return {
      model: String(r.model),
      benchmark: String(r.benchmark),
      base_item: String(r.base_item),
      stratum: str(r.stratum),
      content_language: str(r.content_language),
      q: String(r.q),
      r: String(r.r),
      v: String(r.v),
      correct: bool(r.correct) === true,
      p_true: p !== null && Number.isFinite(p) ? p : null,
      flagged: bool(r.flagged) === true,
      realised: str(r.realised),
      exact: bool(r.exact),
      correct_alt: bool(r.correct_alt),
    };
  });
}
