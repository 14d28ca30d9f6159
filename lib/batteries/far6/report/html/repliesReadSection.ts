/**
 * "Replies read": per readout, pooled over cells, the replies read, the decisive share and the P
 * share among the decisive readings; the table summary.md also gives.
 */
import { fmtNumber as fmt } from '../../../../report/markdown.js';
import type { AnalysisResults } from '../../analysis/types.js';
import { htmlTable } from '../../../../report/html/table.js';
import { empty, p, section } from './section.js';
import type { Section } from './section.js';

/**
 * summary.md's "Replies read": per readout (form/constraint/reader, pooled over cells) the replies
 * read, the decisive share and the P share among decisive readings.
 */
export function repliesReadSection(results: AnalysisResults): Section {
  const per = new Map<string, { replies: number; decisive: number; p: number }>();
  for (const c of results.cellSummary) {
    const key = `${c.form}/${c.constraint}/${c.reader}`;
    const acc = per.get(key) ?? { replies: 0, decisive: 0, p: 0 };
    acc.replies += c.replies;
    acc.decisive += c.decisive;
    acc.p += c.n_p;
    per.set(key, acc);
  }
  const rows = [...per.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => [k, String(v.replies), fmt(v.replies ? v.decisive / v.replies : null), fmt(v.decisive ? v.p / v.decisive : null)]);
  if (rows.length === 0) return section('replies', 'Replies read', [empty('No reply was read.')]);
  return section('replies', 'Replies read', [
    p('Per readout, pooled over cells: the replies read, the share read decisively (P or notP), and the share of P among the decisive ones.'),
    htmlTable({ caption: 'Replies read per readout (cell_summary.csv holds them per cell)', csv: 'cell_summary.csv', header: ['readout', 'replies', 'decisive share', 'P share'], rows }),
  ]);
}
