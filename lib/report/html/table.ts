/** The tables behind the charts: plain HTML tables, sortable by the page's small script. */
import { escapeHtml as esc } from './escape.js';
import type { TableSpec } from './types.js';

const NUMERIC = /^(?:[-−+]?\d[\d.,]*(?:e[-+]?\d+)?\s*%?|–)$/i;

function numericColumns(spec: TableSpec): Set<number> {
  if (spec.numeric) return new Set(spec.numeric);
  const out = new Set<number>();
  for (let c = 1; c < spec.header.length; c++) {
    const cells = spec.rows.map((r) => r[c] ?? '');
    if (cells.length > 0 && cells.every((v) => NUMERIC.test(v)) && cells.some((v) => v !== '–')) out.add(c);
  }
  return out;
}

/**
 * A table with a caption; numeric columns are right-aligned and sort as numbers.
 * @example htmlTable({ caption: 'Counts', header: ['model', 'n'], rows: [['a', '3']] })
 */
export function htmlTable(spec: TableSpec): string {
  const numeric = numericColumns(spec);
  const th = spec.header.map((h, i) => `<th scope="col"${numeric.has(i) ? ' class="num"' : ''}>${esc(h)}</th>`).join('');
  const body = spec.rows
    .map((row) => `<tr>${row.map((cell, i) => `<td${numeric.has(i) ? ' class="num"' : ''}>${esc(cell)}</td>`).join('')}</tr>`)
    .join('');
  // The wrapper scrolls a wide table on a narrow screen instead of widening the page.
  return `<div class="table-wrap"><table class="sortable"><caption>${esc(spec.caption)}</caption><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table></div>${csvLink(spec.csv)}`;
}

/** The line under a table that links the CSV file holding its numbers. */
export function csvLink(csv: TableSpec['csv']): string {
  const names = csv === undefined ? [] : typeof csv === 'string' ? [csv] : csv;
  return names.length === 0 ? '' : `<p class="csv-link">CSV: ${names.map((n) => `<a href="${esc(encodeURI(n))}">${esc(n)}</a>`).join(', ')}</p>`;
}

/** A table folded under a `<details>` disclosure (closed by default). */
export function tableDetails(spec: TableSpec): string {
  // The CSV link stays outside the fold: where the numbers are is seen without opening it.
  const { csv, ...table } = spec;
  return `<details><summary>Table: ${esc(spec.caption)} (${spec.rows.length} row${spec.rows.length === 1 ? '' : 's'})</summary>${htmlTable(table)}</details>${csvLink(csv)}`;
}
