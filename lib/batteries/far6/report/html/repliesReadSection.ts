/**
 * "Replies read": per readout, pooled over cells, the replies read, the decisive share and the P
 * share among the decisive readings; the table summary.md also gives.
 */
import type { AnalysisResults } from '../../analysis/types.js';
import { htmlTable } from '../../../../api/battery.js';
import { REPLIES_READ_HEADER, repliesReadRows } from '../repliesRead.js';
import { empty, p, section } from './section.js';
import type { Section } from './section.js';

/**
 * summary.md's "Replies read": per readout (form/constraint/reader, pooled over cells) the replies
 * read, the decisive share and the P share among decisive readings.
 */
export function repliesReadSection(results: AnalysisResults): Section {
  const rows = repliesReadRows(results.cellSummary);
  if (rows.length === 0) return section('replies', 'Replies read', [empty('No reply was read.')]);
  return section('replies', 'Replies read', [
    p('Per readout, pooled over cells: the replies read, the share read decisively (P or notP), and the share of P among the decisive ones.'),
    htmlTable({ caption: 'Replies read per readout (cell_summary.csv holds them per cell)', csv: 'cell_summary.csv', header: [...REPLIES_READ_HEADER], rows }),
  ]);
}
