/** CSV as RFC 4180 writes it: CRLF line ends, fields with a comma, quote or line break quoted, quotes doubled. */

/** Decimals a number keeps in a CSV, unless written at full precision. */
export const CSV_DECIMALS = 6;

let fullPrecision = false;

/**
 * Runs `fn` (which writes CSVs synchronously) with numbers at full precision, the shortest text
 * that reads back as the same double, instead of CSV_DECIMALS decimals.
 * @example withFullPrecision(() => toCsv(['x'], [{ x: 1 / 3 }])) === 'x\r\n0.3333333333333333\r\n'
 */
export function withFullPrecision<T>(fn: () => T): T {
  const before = fullPrecision;
  fullPrecision = true;
  try {
    return fn();
  } finally {
    fullPrecision = before;
  }
}

/** Numbers keep six decimals (shares and correlations; more digits only add noise) unless withFullPrecision; null is an empty field. */
export function formatCsvValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return '';
    return Number.isInteger(value) || fullPrecision ? String(value) : String(Math.round(value * 1e6) / 1e6);
  }
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** One field, quoted when it must be. */
export function csvField(value: unknown): string {
  const text = formatCsvValue(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * A CSV document with a header row.
 * @example toCsv(['a', 'b'], [{ a: 'x,y', b: 1 }]) === 'a,b\r\n"x,y",1\r\n'
 */
export function toCsv<T extends object>(columns: readonly (keyof T & string)[], rows: readonly T[]): string {
  const lines = [columns.map(csvField).join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvField(row[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
