/** Markdown helpers for the report sections (numbers with fixed digits, pipe tables). */

/** A number with `digits` decimals; `–` for null or non-finite; never `-0.00`. */
export function fmtNumber(x: number | null | undefined, digits = 2): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const text = x.toFixed(digits);
  return /^-0\.0+$/.test(text) ? text.slice(1) : text;
}

function mdCell(text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll('|', '\\|').replace(/\r?\n/g, ' ');
}

/** A pipe table with escaped cells. */
export function mdTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const lines = [`| ${header.map(mdCell).join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  for (const row of rows) lines.push(`| ${row.map(mdCell).join(' | ')} |`);
  return lines.join('\n');
}
