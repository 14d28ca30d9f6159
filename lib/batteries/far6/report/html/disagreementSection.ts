/**
 * Reply-level disagreement (Same Judgment, Different Yes §4, Figure 2b): among the replies two
 * readers both read decisively, the share they read differently, as the mean over cells with each
 * cell as a tick.
 */
import { domainOf, fmtNumber as fmt, rowChart } from '../../../../api/battery.js';
import type { ChartRow } from '../../../../api/battery.js';
import type { AnalysisResults } from '../../analysis/types.js';
import { cellName, figure, introducedSection, NO_AGREEMENT, pct } from './section.js';
import type { Section } from './section.js';

/** Mean reply-level disagreement over cells, with each cell as a tick (Figure 2b). */
export function disagreementSection(results: AnalysisResults): Section {
  const s = introducedSection('disagreement', 'The same replies read twice: reply-level disagreement', 'Same Judgment, Different Yes §4, Figure 2b: among replies that both readers read decisively, the share on which they disagree; bar: mean over cells (each cell equally), whisker: lowest to highest cell, ticks: cells.');
  const ag = results.agreement;
  if (!ag) return s.none(NO_AGREEMENT);
  const summary = ag.disagreementSummary.filter((d) => d.n_cells > 0 && d.mean_disagreement !== null);
  if (summary.length === 0) return s.none('No reply was read decisively by two readers.');
  const rows: ChartRow[] = summary.map((d) => {
    const cells = ag.disagreement.filter(
      (c) => c.form === d.form && c.constraint === d.constraint && c.reader_a === d.reader_a && c.reader_b === d.reader_b && c.disagreement !== null,
    );
    return {
      label: `${d.form}/${d.constraint}: ${d.reader_a} vs ${d.reader_b}`,
      bars: [{ x: d.mean_disagreement as number, series: 0, title: `mean ${pct(d.mean_disagreement)} over ${d.n_cells} cells (${d.n_both_decisive} replies)` }],
      ranges: d.min_disagreement !== null && d.max_disagreement !== null ? [{ lo: d.min_disagreement, hi: d.max_disagreement, series: 0 }] : [],
      marks: cells.map((c) => ({ x: c.disagreement as number, series: 1, shape: 'tick' as const, title: `${cellName(c.model, c.language)}: ${pct(c.disagreement)} of ${c.n_both_decisive}` })),
      emphasis: d.form === 'negint' && d.constraint === 'yesno',
    };
  });
  const values = summary.flatMap((d) => [d.max_disagreement, d.mean_disagreement]);
  const [, hi] = domainOf(values, [0, 0.1], [0, 1]);
  return s.of([
    figure(
      rowChart({
        id: 'chart-disagreement',
        title: 'Reply-level disagreement between two readings of the same replies',
        desc: `${rows.length} form, constraint and reader pairs; bars are the mean over cells, ticks single cells.`,
        rows,
        domain: [0, hi],
        axisLabel: 'share of replies read differently',
        series: [{ label: 'mean over cells', shape: 'square' }, { label: 'cell', shape: 'tick' }],
        format: (x) => `${Math.round(x * 100)} %`,
      }),
      'Figure 2b of Same Judgment, Different Yes, from this campaign; the negative-interrogative yes/no token in red.',
      {
        caption: 'Reply-level disagreement over cells (reply_disagreement_summary.csv)',
        csv: 'reply_disagreement_summary.csv',
        header: ['form', 'constraint', 'reader A', 'reader B', 'cells', 'replies', 'mean disagreement', 'min', 'max'],
        rows: summary.map((d) => [d.form, d.constraint, d.reader_a, d.reader_b, String(d.n_cells), String(d.n_both_decisive), fmt(d.mean_disagreement, 3), fmt(d.min_disagreement, 3), fmt(d.max_disagreement, 3)]),
      },
    ),
  ]);
}
