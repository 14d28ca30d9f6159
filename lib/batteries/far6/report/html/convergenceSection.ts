/**
 * Readout convergence (Same Judgment, Different Yes §4, Figure 2a): per readout pair, the median
 * story-level r over cells with its 10–90 % range and the median residual r, beside the same
 * replies read twice with identical weights.
 */
import { domainOf, fmtNumber as fmt, rowChart, tableDetails } from '../../../../api/battery.js';
import type { ChartRow, HtmlReportOptions, RowMark } from '../../../../api/battery.js';
import type { AnalysisResults } from '../../analysis/types.js';
import { headlineIndex } from './headline.js';
import { chartValues, empty, figure, p, section } from './section.js';
import type { Section } from './section.js';

/** Same Judgment, Different Yes §4: the plotted pairs converge at median story-level r ≥ 0.90; the rest are drawn red. */
const CONVERGENCE_LINE = 0.9;

/** Median story-level r and its 10–90 % range over cells per readout pair (Figure 2a). */
export function convergenceSection(results: AnalysisResults, opts: HtmlReportOptions): Section {
  const title = 'Readout convergence: which readouts converge';
  const intro = p(
    `Same Judgment, Different Yes §4, Figure 2a: story-level r between two readouts of the same cell on ≥ ${results.minCommonStories} common stories, median over cells (dot) and 10–90 % range (whisker); hollow: median residual r of the same pair. Rows below the median r of ${CONVERGENCE_LINE.toFixed(2)} are red. The same replies read twice (rule and judge on the replies both read decisively, identical weights) isolate the reading from the replies.`,
  );
  const conv = results.convergence.filter((c) => c.n_cells > 0 && c.median_r !== null);
  const residual = results.residualConvergence ?? [];
  const residualOf = (a: string, b: string) =>
    residual.find((r) => (r.readout_a === a && r.readout_b === b) || (r.readout_a === b && r.readout_b === a));
  const headline = conv
    .map((c) => ({ c, k: headlineIndex(c.readout_a, c.readout_b) }))
    .filter((x) => x.k >= 0)
    .sort((x, y) => x.k - y.k || (x.c.readout_a + x.c.readout_b < y.c.readout_a + y.c.readout_b ? -1 : 1))
    .map((x) => x.c);
  const max = opts.maxConvergenceRows ?? 40;
  const drawn = headline.length ? headline : [...conv].sort((a, b) => (b.median_r ?? 0) - (a.median_r ?? 0)).slice(0, max);
  const drawnGroup = headline.length ? 'The comparisons of Same Judgment, Different Yes §4' : drawn.length < conv.length ? `The ${drawn.length} readout pairs with the highest median r (of ${conv.length})` : 'Every readout pair';
  const rows: ChartRow[] = drawn.map((c) => {
    const res = residualOf(c.readout_a, c.readout_b);
    const marks: RowMark[] = [{ x: c.median_r as number, series: 0, shape: 'dot', title: `median r ${fmt(c.median_r)} over ${c.n_cells} cells (10 %: ${fmt(c.q10_r)}, 90 %: ${fmt(c.q90_r)}); median mean |Δ| ${fmt(c.median_abs_diff)}` }];
    if (res?.median_residual_r !== null && res?.median_residual_r !== undefined) {
      marks.push({ x: res.median_residual_r, series: 1, shape: 'ring', title: `median residual r ${fmt(res.median_residual_r)} over ${res.n_cells} cells` });
    }
    return {
      label: `${c.readout_a} ~ ${c.readout_b}`,
      group: drawnGroup,
      marks,
      ranges: c.q10_r !== null && c.q90_r !== null ? [{ lo: c.q10_r, hi: c.q90_r, series: 0 }] : [],
      emphasis: (c.median_r as number) < CONVERGENCE_LINE,
    };
  });
  const same = (results.sameReplies?.convergence ?? []).filter((c) => c.n_cells > 0 && c.median_r !== null);
  for (const c of same) {
    rows.push({
      label: `${c.readout_a} ~ ${c.readout_b}`,
      group: 'The same replies read twice (identical weights)',
      marks: [{ x: c.median_r as number, series: 2, shape: 'dot', title: `median r ${fmt(c.median_r)} over ${c.n_cells} cells; median mean |Δ| ${fmt(c.median_abs_diff)}` }],
      ranges: c.q10_r !== null && c.q90_r !== null ? [{ lo: c.q10_r, hi: c.q90_r, series: 2 }] : [],
      emphasis: (c.median_r as number) < CONVERGENCE_LINE,
    });
  }
  const parts = [intro];
  if (rows.length === 0) {
    parts.push(empty(`No readout pair had ≥ ${results.minCommonStories} common stories in any cell.`));
  } else {
    const values = chartValues(rows);
    parts.push(
      figure(
        rowChart({
          id: 'chart-convergence',
          title: 'Readout convergence: median story-level r over cells with 10–90 % range',
          desc: `${rows.length} readout pairs; dots are medians over cells, whiskers the 10–90 % range, rings the median residual r.`,
          rows,
          domain: domainOf(values, [0, 1], [-1, 1]),
          axisLabel: 'story-level r (median over cells)',
          series: [
            { label: 'story-level r', shape: 'dot' },
            { label: 'residual r', shape: 'ring' },
            ...(same.length ? [{ label: 'same replies, two readings', shape: 'dot' as const }] : []),
          ],
          references: [{ x: CONVERGENCE_LINE, label: `r = ${CONVERGENCE_LINE}` }, { x: 0, label: 'r = 0' }],
        }),
        'Figure 2a of Same Judgment, Different Yes, from this campaign. Hover a mark for its numbers.',
        {
          caption: `All ${results.convergence.length} readout pairs (readout_convergence.csv, readout_residual_convergence.csv)`,
          csv: ['readout_convergence.csv', 'readout_residual_convergence.csv'],
          header: ['readout A', 'readout B', 'cells', 'median r', '10 %', '90 %', 'median mean |Δ|', 'median residual r'],
          rows: results.convergence.map((c) => [c.readout_a, c.readout_b, String(c.n_cells), fmt(c.median_r), fmt(c.q10_r), fmt(c.q90_r), fmt(c.median_abs_diff), fmt(residualOf(c.readout_a, c.readout_b)?.median_residual_r)]),
        },
      ),
    );
    if (same.length) {
      parts.push(
        tableDetails({
          caption: 'The same replies read twice (same_replies_convergence.csv)',
          csv: 'same_replies_convergence.csv',
          header: ['judge reading', 'rule reading', 'cells', 'median r', '10 %', '90 %', 'median mean |Δ|'],
          rows: same.map((c) => [c.readout_a, c.readout_b, String(c.n_cells), fmt(c.median_r), fmt(c.q10_r), fmt(c.q90_r), fmt(c.median_abs_diff)]),
        }),
      );
    }
  }
  // summary.md gives this chart's rows in three sections: the same replies read twice and the residual profiles are rows of it.
  return section('convergence', title, parts, ['The same replies, two readings', 'Residual profiles across readouts']);
}
