/**
 * A record's field values brought to the types the schema checks, shared by the full validation
 * (validate.ts) and the quick check of valid rows (quickRow.ts), so that both see the same values.
 */
import { jsonSyntaxProblem, shortValue } from '../../../api/battery.js';
import { BOOLEAN_FIELDS, INTEGER_FIELDS, JSON_FIELDS, NUMBER_FIELDS } from './schema.js';

/** A value as an issue message shows it (dates by their ISO text). */
export function show(v: unknown): string {
  if (v instanceof Date) return `the date ${v.toISOString()}`;
  return shortValue(v);
}

/** A JSON field whose text is not JSON: the message that names it. */
export interface JsonError {
  readonly jsonError: string;
}

/**
 * Brings a field to the type the schema checks: CSV gives text, Parquet may give dates, and JSON
 * structures may come as JSON text in any format. Values that do not convert are left as they are,
 * so that the schema names them.
 */
export function normalize(field: string, value: unknown, fromCsv: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value !== 'string') return value;
  if (JSON_FIELDS.has(field)) {
    const t = value.trim();
    if (t === '') return null;
    try {
      return JSON.parse(t) as unknown;
    } catch (err) {
      return { jsonError: `expected JSON (${jsonSyntaxProblem(err)}), got ${show(value)}` } satisfies JsonError;
    }
  }
  if (!fromCsv) return value;
  const t = value.trim();
  if (INTEGER_FIELDS.has(field) && /^[+-]?\d+$/.test(t)) return Number(t);
  if (NUMBER_FIELDS.has(field) && t !== '' && Number.isFinite(Number(t))) return Number(t);
  if (BOOLEAN_FIELDS.has(field) && /^(true|false)$/i.test(t)) return t.toLowerCase() === 'true';
  return value;
}

/** Whether `normalize` gave up on a JSON field (its text is not JSON). */
export function isJsonError(n: unknown): n is JsonError {
  return n !== null && typeof n === 'object' && 'jsonError' in n;
}
