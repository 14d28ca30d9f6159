/**
 * "Replies read", the table summary.md and report.html both give: per readout
 * (form/constraint/reader), pooled over cells, the replies read, the share read decisively (P or
 * notP) and the share of P among the decisive ones, in readout order.
 */
import { fmtNumber } from '../../../api/battery.js';
import type { CellSummaryRow } from '../analysis/types.js';

/** The table's header. */
export const REPLIES_READ_HEADER = ['readout', 'replies', 'decisive share', 'P share'] as const;

/**
 * The table's rows, one per readout; none when no reply was read.
 * @example repliesReadRows(results.cellSummary) // [['plain/yesno/rule', '120', '0.95', '0.41'], …]
 */
export function repliesReadRows(cells: readonly CellSummaryRow[]): string[][] {
  const per = new Map<string, { replies: number; decisive: number; p: number }>();
  for (const c of cells) {
    const key = `${c.form}/${c.constraint}/${c.reader}`;
    const acc = per.get(key) ?? { replies: 0, decisive: 0, p: 0 };
    acc.replies += c.replies;
    acc.decisive += c.decisive;
    acc.p += c.n_p;
    per.set(key, acc);
  }
  return [...per.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => [k, String(v.replies), fmtNumber(v.replies ? v.decisive / v.replies : null), fmtNumber(v.decisive ? v.p / v.decisive : null)]);
}
