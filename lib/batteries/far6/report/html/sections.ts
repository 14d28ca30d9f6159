/**
 * The sections of report.html, one per view of the paper (Same Judgment, Different Yes §4–§7): readout convergence
 * and reply-level disagreement (Figure 2a/2b), between-cell heat maps (Figure 3c–f), model
 * identity (Table 6, Figure 3a/3b), answer habits (§6, Figure 4) and the polarity of the
 * negative-interrogative token (§7, Figure 5b/5c). Each returns the HTML of one <section>; a
 * section whose analysis is absent or empty says so instead of drawing an empty chart.
 */
import {
  domainOf,
  escapeHtml as esc,
  fmtNumber as fmt,
  htmlTable,
  matrixChart,
  reportFigure,
  rowChart,
  scatterChart,
  slug,
  stackedChart,
  tableDetails,
} from '../../../../api/battery.js';
import type { ChartRow, HtmlReportOptions, MarkShape, ReportSection, RowMark, TableSpec } from '../../../../api/battery.js';
import type {
  AnalysisResults,
  CellHabit,
  ClassEstimate,
  IdentityMetric,
  PolarityShare,
  ProfilePair,
  ReplyTotalsRow,
} from '../../analysis/types.js';
import { headlineIndex } from './headline.js';

export type Section = ReportSection;

/** The paper the sections cite. */
export const FAR6_PAPER = 'Same Judgment, Different Yes';

/** Where each section's view comes from in the paper, cited beside its title. */
const CITES: Readonly<Record<string, string>> = {
  convergence: '§4, Figure 2a',
  disagreement: '§4, Figure 2b',
  heatmaps: '§5, Figure 3c–f',
  identity: '§5, Table 6, Figure 3a/3b',
  habits: '§6, Figure 4',
  polarity: '§7, Figure 5',
  'judge-audit': '"Sentence judging", Table 7',
};

const METRIC_LABEL: Readonly<Record<IdentityMetric, string>> = { residual_r: 'residual r', story_r: 'story-level r', mean_abs_diff: 'mean |Δ|' };
/** Same Judgment, Different Yes §4: the plotted pairs converge at median story-level r ≥ 0.90; the rest are drawn red. */
const CONVERGENCE_LINE = 0.9;

/** `alsoIn`: the titles of summary.md sections whose numbers this section shows besides its own. */
export function section(id: string, title: string, parts: readonly string[], alsoIn: readonly string[] = []): Section {
  const where = CITES[id];
  return { id, title, body: parts, ...(alsoIn.length > 0 ? { alsoIn } : {}), ...(where ? { cite: `${FAR6_PAPER} ${where}` } : {}) };
}

function p(text: string): string {
  return `<p>${esc(text)}</p>`;
}

function empty(text: string): string {
  return `<p class="empty">${esc(text)}</p>`;
}

function figure(svg: string, caption: string, table?: TableSpec): string {
  return reportFigure(svg, caption, table ? { table } : {});
}

function uniqueSorted(xs: Iterable<string>): string[] {
  return [...new Set(xs)].sort();
}

function pct(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '–' : `${(x * 100).toFixed(digits)} %`;
}

const cellName = (model: string, language: string): string => `${model}/${language}`;

/* ---- what was run ---- */

/** Models, languages and reply totals (the "What was run" of summary.md), for the shell's header. */
export function runFacts(results: AnalysisResults): { models: string[]; design: [string, string][]; runTable: TableSpec } {
  const totals = results.replyTotals;
  const sum = (f: (t: ReplyTotalsRow) => number): number => totals.reduce((acc, t) => acc + f(t), 0);
  const readouts = uniqueSorted(results.storyScores.map((s) => s.readout));
  const outside = sum((t) => t.attempts_outside_design ?? 0);
  const design: [string, string][] = [
    ['Languages', uniqueSorted(totals.map((t) => t.language)).join(', ') || '–'],
    ['Cells (model × language)', String(uniqueSorted(totals.map((t) => cellName(t.model, t.language))).length)],
    ['Attempts stored', String(sum((t) => t.attempts))],
    ['OK attempts', String(sum((t) => t.ok_attempts))],
    ['Items with an OK reply', String(sum((t) => t.items_ok))],
    ['Simulated attempts', String(sum((t) => t.simulated_attempts))],
    ['Cost (USD)', fmt(sum((t) => t.cost_usd), 4)],
    ...(outside > 0 ? ([['Attempts outside the design (stored, not analysed)', `${outside}, $${fmt(sum((t) => t.cost_outside_design_usd ?? 0), 4)}`]] as [string, string][]) : []),
    ['Item rows read (prompt item × reader)', String(results.itemRows)],
    ['Readouts with story scores', String(readouts.length)],
    ['Minimum common stories', String(results.minCommonStories)],
  ];
  const runTable: TableSpec = {
    caption: 'Replies per cell',
    csv: 'reply_totals.csv',
    header: ['model', 'language', 'attempts', 'ok attempts', 'items ok', 'simulated attempts', 'cost (USD)'],
    rows: totals.map((t) => [t.model, t.language, String(t.attempts), String(t.ok_attempts), String(t.items_ok), String(t.simulated_attempts), fmt(t.cost_usd, 4)]),
  };
  return { models: uniqueSorted(totals.map((t) => t.model)), design, runTable };
}

/* ---- Same Judgment, Different Yes §4, Figure 2a ---- */

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
    const values = rows.flatMap((r) => [...(r.marks ?? []).map((m) => m.x), ...(r.ranges ?? []).flatMap((g) => [g.lo, g.hi])]);
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

/* ---- Same Judgment, Different Yes §4, Figure 2b ---- */

/** Mean reply-level disagreement over cells, with each cell as a tick (Figure 2b). */
export function disagreementSection(results: AnalysisResults): Section {
  const title = 'The same replies read twice: reply-level disagreement';
  const intro = p('Same Judgment, Different Yes §4, Figure 2b: among replies that both readers read decisively, the share on which they disagree; bar: mean over cells (each cell equally), whisker: lowest to highest cell, ticks: cells.');
  const ag = results.agreement;
  if (!ag) return section('disagreement', title, [intro, empty('Not computed: the data hold no replies read by two readers.')]);
  const summary = ag.disagreementSummary.filter((d) => d.n_cells > 0 && d.mean_disagreement !== null);
  if (summary.length === 0) return section('disagreement', title, [intro, empty('No reply was read decisively by two readers.')]);
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
  return section('disagreement', title, [
    intro,
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

/* ---- Same Judgment, Different Yes Figure 3c–f ---- */

interface Cell {
  readonly model: string;
  readonly language: string;
}

function pairKey(a: Cell, b: Cell): string {
  const ka = `${a.model}\u0000${a.language}`;
  const kb = `${b.model}\u0000${b.language}`;
  return ka < kb ? `${ka}\u0001${kb}` : `${kb}\u0001${ka}`;
}

/** Between-cell story-level r and residual r, ordered by model and by language (Figure 3c–f). */
export function heatmapSection(results: AnalysisResults): Section {
  const title = 'Between-cell correlations';
  const intro = p(
    'Same Judgment, Different Yes §5, Figure 3c–f: story-level r and residual-profile r (language consensus and cell mean removed) between every two cells on their common stories, cells grouped by model and then by language. Green: positive, purple: negative (neither is better: the maps show where cells agree), grey: too few common stories, dark: the cell itself.',
  );
  const id = results.identity;
  if (!id) return section('heatmaps', title, [intro, empty('Not computed: no identity analysis in these results.')]);
  const parts = [intro];
  if (id.readouts.length === 0) parts.push(empty('No identity readout (plain/label/rule, plain/free/judge:*) has story scores.'));
  for (const readout of id.readouts) {
    const pairs = id.pairs.filter((q) => q.readout === readout);
    const byKey = new Map<string, ProfilePair>();
    const cellMap = new Map<string, Cell>();
    for (const q of pairs) {
      const a = { model: q.model_a, language: q.language_a };
      const b = { model: q.model_b, language: q.language_b };
      byKey.set(pairKey(a, b), q);
      cellMap.set(`${a.model}\u0000${a.language}`, a);
      cellMap.set(`${b.model}\u0000${b.language}`, b);
    }
    parts.push(`<h3>${esc(readout)}</h3>`);
    const cells = [...cellMap.values()];
    if (cells.length < 2) {
      parts.push(empty('Fewer than two cells have story scores under this readout.'));
      continue;
    }
    const cmp = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
    const orders: [string, Cell[]][] = [
      ['model', [...cells].sort((a, b) => cmp(a.model, b.model) || cmp(a.language, b.language))],
      ['language', [...cells].sort((a, b) => cmp(a.language, b.language) || cmp(a.model, b.model))],
    ];
    const grid: string[] = [];
    for (const [by, order] of orders) {
      for (const metric of ['r', 'residual_r'] as const) {
        const label = metric === 'r' ? 'story-level r' : 'residual r';
        const groups = order.map((c) => (by === 'model' ? c.model : c.language));
        grid.push(
          `<figure class="matrix">${matrixChart({
            id: `hm-${slug(readout)}-${metric === 'r' ? 'story' : 'residual'}-by-${by}`,
            title: `${readout}: ${label} between cells, grouped by ${by}`,
            desc: `${order.length} × ${order.length} cells ordered by ${by}; ${pairs.length} cell pairs.`,
            rowLabels: order.map((c) => cellName(c.model, c.language)),
            colLabels: order.map((c) => cellName(c.model, c.language)),
            rowGroups: groups,
            colGroups: groups,
            scale: 'r',
            // Cells that agree are not better than cells that differ: the question is where they do.
            better: 'neither',
            legendLabel: label,
            cell: (i, j) => {
              const a = order[i] as Cell;
              const b = order[j] as Cell;
              if (i === j) return { value: null, diagonal: true, title: cellName(a.model, a.language) };
              const q = byKey.get(pairKey(a, b));
              const v = q ? q[metric] : null;
              const n = q ? (metric === 'r' ? q.n_common : q.n_common_residual) : 0;
              return { value: v, title: `${cellName(a.model, a.language)} × ${cellName(b.model, b.language)}: ${label} ${fmt(v)} on ${n} stories${q ? ` (${q.class.replace('_', ' ')})` : ''}` };
            },
          })}<figcaption class="m-caption">${esc(`${label} between cells, grouped by ${by} (Same Judgment, Different Yes §5, Figure 3c–f)`)}</figcaption></figure>`,
        );
      }
    }
    parts.push(`<div class="matrices">${grid.join('')}</div>`);
    parts.push(
      tableDetails({
        caption: `${readout}: cell pairs (profile_pairs.csv)`,
        csv: 'profile_pairs.csv',
        header: ['model A', 'language A', 'model B', 'language B', 'class', 'common stories', 'r', 'residual stories', 'residual r', 'mean |Δ|'],
        rows: pairs.map((q) => [q.model_a, q.language_a, q.model_b, q.language_b, q.class, String(q.n_common), fmt(q.r), String(q.n_common_residual), fmt(q.residual_r), fmt(q.mean_abs_diff)]),
      }),
    );
  }
  return section('heatmaps', title, parts);
}

/* ---- Same Judgment, Different Yes §5, Table 6, Figure 3a/3b ---- */

const CONTRASTS: readonly { key: ClassEstimate['contrast']; label: string }[] = [
  { key: 'same_model', label: 'same model' },
  { key: 'same_language', label: 'same language' },
  { key: 'both_differ', label: 'both differ' },
  { key: 'same_model-same_language', label: 'same model − same language' },
  { key: 'same_model-both_differ', label: 'same model − both differ' },
  { key: 'same_language-both_differ', label: 'same language − both differ' },
];

/** Nearest-neighbour counts beside chance, class means with bootstrap intervals, per-model ranges. */
export function identitySection(results: AnalysisResults): Section {
  const title = 'Model identity across languages';
  const id = results.identity;
  const intro = p(
    `Same Judgment, Different Yes §5, Table 6 and Figure 3a/3b: for each cell, whether its nearest other cell (on ≥ ${results.minCommonStories} common stories) is the same model in another language, counted beside a uniform-random neighbour; class means of cell pairs with 95 % story-bootstrap intervals${id ? ` (${id.draws} draws, seed ${id.seed})` : ''}; and each model's language-pair values.`,
  );
  if (!id) return section('identity', title, [intro, empty('Not computed: no identity analysis in these results.')]);
  const parts = [intro];
  if (id.readouts.length === 0) parts.push(empty('No identity readout (plain/label/rule, plain/free/judge:*) has story scores.'));
  for (const readout of id.readouts) {
    const rs = slug(readout);
    parts.push(`<h3>${esc(readout)}</h3>`);
    const counts = id.counts.filter((c) => c.readout === readout && c.n_cells > 0);
    const maxCells = Math.max(1, ...counts.map((c) => c.n_cells));
    if (counts.length) {
      parts.push(
        figure(
          rowChart({
            id: `chart-identity-counts-${rs}`,
            title: `${readout}: cells whose nearest neighbour is the same model, beside a random neighbour`,
            desc: counts.map((c) => `${METRIC_LABEL[c.metric]}: ${fmt(c.same_model, 1)} of ${c.n_cells} cells, chance ${fmt(c.expected_random, 1)}`).join('; '),
            rows: counts.map((c) => ({
              label: METRIC_LABEL[c.metric],
              bars: [{ x: c.same_model, series: 0, title: `${fmt(c.same_model, Number.isInteger(c.same_model) ? 0 : 1)} of ${c.n_cells} cells (${c.n_ties} ties)` }],
              marks: [{ x: c.expected_random, series: 1, shape: 'diamond', title: `uniform-random benchmark ${fmt(c.expected_random, 1)}` }],
            })),
            domain: [0, maxCells],
            axisLabel: 'cells',
            series: [{ label: 'same-model nearest neighbour', shape: 'square' }, { label: 'random benchmark', shape: 'diamond' }],
          }),
          'Table 6 of Same Judgment, Different Yes, from this campaign.',
          {
            caption: `${readout}: identity counts (identity_counts.csv)`,
            csv: 'identity_counts.csv',
            header: ['metric', 'same-model nearest', 'random benchmark', 'cells', 'ties'],
            rows: counts.map((c) => [METRIC_LABEL[c.metric], fmt(c.same_model, Number.isInteger(c.same_model) ? 0 : 1), fmt(c.expected_random, 1), String(c.n_cells), String(c.n_ties)]),
          },
        ),
      );
    } else {
      parts.push(empty('No cell has another cell to compare with.'));
    }
    const classes = id.classes.filter((c) => c.readout === readout);
    const charts: string[] = [];
    for (const metric of ['residual_r', 'story_r', 'mean_abs_diff'] as const) {
      const rows: ChartRow[] = [];
      for (const { key, label } of CONTRASTS) {
        const c = classes.find((x) => x.story_group === 'all' && x.metric === metric && x.contrast === key);
        if (!c || c.estimate === null) continue;
        rows.push({
          label,
          group: key.includes('-') ? 'differences (same bootstrap draws)' : 'class means',
          marks: [{ x: c.estimate, series: 0, shape: 'dot', title: `${label}: ${fmt(c.estimate, 3)} [${fmt(c.ci_low, 3)}, ${fmt(c.ci_high, 3)}] over ${c.n_pairs} pairs` }],
          ranges: c.ci_low !== null && c.ci_high !== null ? [{ lo: c.ci_low, hi: c.ci_high, series: 0 }] : [],
        });
      }
      if (rows.length === 0) continue;
      const values = rows.flatMap((r) => [...(r.marks ?? []).map((m) => m.x), ...(r.ranges ?? []).flatMap((g) => [g.lo, g.hi])]);
      charts.push(
        `<div class="small">${rowChart({
          id: `chart-identity-classes-${rs}-${slug(metric)}`,
          title: `${readout}: ${METRIC_LABEL[metric]} by class of cell pair, with 95 % bootstrap intervals`,
          desc: rows.map((r) => `${r.label} ${r.marks?.[0]?.title ?? ''}`).join('; '),
          rows,
          domain: domainOf(values, [0], metric === 'mean_abs_diff' ? [-1, 1] : [-1, 1]),
          axisLabel: METRIC_LABEL[metric],
          series: [{ label: 'estimate, whisker 95 % interval', shape: 'dot' }],
          references: [{ x: 0, label: '0' }],
          plotWidth: 300,
        })}</div>`,
      );
    }
    if (charts.length) {
      parts.push(
        `<figure><div class="row-of-charts">${charts.join('')}</div><figcaption>${esc('Figure 3a of Same Judgment, Different Yes: class means of cell pairs (all stories) with 95 % story-bootstrap intervals.')}</figcaption>${tableDetails({
          caption: `${readout}: class means, all stories and by story group (identity_classes.csv)`,
          csv: 'identity_classes.csv',
          header: ['stories', 'metric', 'contrast', 'pairs', 'estimate', '95 % low', '95 % high', 'draws'],
          rows: classes.map((c) => [c.story_group, METRIC_LABEL[c.metric], c.contrast, String(c.n_pairs), fmt(c.estimate, 3), fmt(c.ci_low, 3), fmt(c.ci_high, 3), String(c.n_draws)]),
        })}</figure>`,
      );
    }
    const models = (id.models ?? []).filter((m) => m.readout === readout);
    const modelNames = uniqueSorted(models.map((m) => m.model));
    const rRows: ChartRow[] = modelNames.map((model) => {
      const story = models.find((m) => m.model === model && m.metric === 'story_r');
      const res = models.find((m) => m.model === model && m.metric === 'residual_r');
      const marks: RowMark[] = [];
      const ranges: { lo: number; hi: number; series: number }[] = [];
      for (const [m, series, shape] of [[story, 0, 'dot'], [res, 1, 'ring']] as const) {
        if (!m || m.mean === null) continue;
        marks.push({ x: m.mean, series, shape, title: `${METRIC_LABEL[m.metric]}: mean ${fmt(m.mean)} over ${m.n_pairs} language pairs (${fmt(m.min)} to ${fmt(m.max)})` });
        if (m.min !== null && m.max !== null) ranges.push({ lo: m.min, hi: m.max, series });
      }
      const nearest = res ? ` (${fmt(res.same_model_nearest, Number.isInteger(res.same_model_nearest) ? 0 : 1)}/${res.n_cells})` : '';
      return { label: `${model}${nearest}`, marks, ranges };
    });
    if (rRows.some((r) => (r.marks ?? []).length > 0)) {
      const values = rRows.flatMap((r) => [...(r.marks ?? []).map((m) => m.x), ...(r.ranges ?? []).flatMap((g) => [g.lo, g.hi])]);
      parts.push(
        figure(
          rowChart({
            id: `chart-identity-models-${rs}`,
            title: `${readout}: each model's language-pair values`,
            desc: `${rRows.length} models; mean (marker) and range (whisker) of same-model language-pair values; in brackets, cells whose nearest residual-r neighbour is the same model.`,
            rows: rRows,
            domain: domainOf(values, [0, 1], [-1, 1]),
            axisLabel: 'r between the model\'s languages',
            series: [{ label: 'story-level r', shape: 'dot' }, { label: 'residual r', shape: 'ring' }],
            references: [{ x: 0, label: 'r = 0' }],
          }),
          'Figure 3b of Same Judgment, Different Yes: per model, the mean and range over its language pairs; in brackets its cells whose nearest residual-r neighbour is the same model.',
          {
            caption: `${readout}: per model (identity_models.csv)`,
            csv: 'identity_models.csv',
            header: ['model', 'metric', 'cells', 'same-model nearest', 'language pairs', 'mean', 'min', 'max'],
            rows: models.map((m) => [m.model, METRIC_LABEL[m.metric], String(m.n_cells), fmt(m.same_model_nearest, Number.isInteger(m.same_model_nearest) ? 0 : 1), String(m.n_pairs), fmt(m.mean), fmt(m.min), fmt(m.max)]),
          },
        ),
      );
    }
  }
  return section('identity', title, parts);
}

/* ---- Same Judgment, Different Yes §6, Figure 4 ---- */

const FORM_ORDER = ['plain', 'negint', 'alternative', 'ornot'];
const FORM_LABEL: Readonly<Record<string, string>> = { plain: 'plain question', negint: 'negative interrogative', alternative: 'alternative question', ornot: 'or-not question' };
const FORM_SHAPE: Readonly<Record<string, MarkShape>> = { plain: 'ring', negint: 'dot', alternative: 'diamond', ornot: 'square' };

function formOf(readout: string): string {
  return readout.slice(0, readout.indexOf('/'));
}

function constraintOf(readout: string): string {
  const rest = readout.slice(readout.indexOf('/') + 1);
  return rest.slice(0, rest.indexOf('/'));
}

function readerOf(readout: string): string {
  const rest = readout.slice(readout.indexOf('/') + 1);
  return rest.slice(rest.indexOf('/') + 1);
}

type HabitKey = 'keying_bias' | 'second_listed_pref' | 'named_term_pull';

function habitChart(habits: readonly CellHabit[], key: HabitKey, constraint: string, label: string, what: string): string | null {
  // Same Judgment, Different Yes §6: the habits live on the token and the letter, read by the fixed rule.
  const rows = habits.filter((h) => constraintOf(h.readout) === constraint && readerOf(h.readout) === 'rule' && h[key] !== null);
  if (rows.length === 0) return null;
  const forms = uniqueSorted(rows.map((h) => formOf(h.readout))).sort((a, b) => FORM_ORDER.indexOf(a) - FORM_ORDER.indexOf(b));
  const chartRows: ChartRow[] = [];
  forms.forEach((form, series) => {
    const ofForm = rows.filter((h) => formOf(h.readout) === form);
    for (const model of uniqueSorted(ofForm.map((h) => h.model))) {
      const cells = ofForm.filter((h) => h.model === model);
      const values = cells.map((h) => h[key] as number);
      const m = values.reduce((a, b) => a + b, 0) / values.length;
      chartRows.push({
        label: model,
        group: `${FORM_LABEL[form] ?? form} (${form}/${constraint}/rule)`,
        marks: [
          ...cells.map((h) => ({ x: h[key] as number, series, shape: 'tick' as const, title: `${cellName(h.model, h.language)}: ${fmt(h[key], 3)} on ${h.n_stories} stories` })),
          { x: m, series, shape: FORM_SHAPE[form] ?? 'dot', title: `${model}: mean over ${values.length} languages ${fmt(m, 3)}` },
        ],
      });
    }
  });
  const values = rows.map((h) => h[key] as number);
  return figure(
    rowChart({
      id: `chart-habit-${slug(key)}`,
      title: `${label} per model: mean over languages (marker) and each language (ticks)`,
      desc: `${what} ${rows.length} cells under ${forms.join(', ')} questions.`,
      rows: chartRows,
      domain: domainOf(values, [0], [-1, 1]),
      axisLabel: label,
      series: forms.map((f) => ({ label: FORM_LABEL[f] ?? f, shape: FORM_SHAPE[f] ?? 'dot' })),
      references: [{ x: 0, label: '0' }],
    }),
    `Figure 4 of Same Judgment, Different Yes: ${label}; hollow markers for plain questions, filled for negative interrogatives; ticks mark languages.`,
    {
      caption: `${label} per cell (cell_habits.csv)`,
      csv: 'cell_habits.csv',
      header: ['model', 'language', 'readout', 'stories', label],
      rows: rows.map((h) => [h.model, h.language, h.readout, String(h.n_stories), fmt(h[key], 3)]),
    },
  );
}

/** Keying bias, second-listed preference and named-term pull per cell; sign changes; variance shares. */
export function habitsSection(results: AnalysisResults): Section {
  const title = 'Answer habits across cells and their change under negation';
  const parts = [
    p(
      'Same Judgment, Different Yes §6, Figure 4: yes/no keying bias b (negative: the side the question does not name, e.g. "no", is preferred), the second-listed preference of proposition letters and their named-term pull, per model over languages; whether b changes sign from the plain question to the negative interrogative; and how much of each habit\'s cell matrix belongs to the model, the language or their interaction.',
    ),
  ];
  const charts = [
    habitChart(results.cellHabits, 'keying_bias', 'yesno', 'yes/no keying bias b', 'Keying bias of the yes/no token in'),
    habitChart(results.cellHabits, 'second_listed_pref', 'label', 'second-listed preference', 'Second-listed preference of proposition letters in'),
    habitChart(results.cellHabits, 'named_term_pull', 'label', 'named-term pull', 'Named-term pull of proposition letters in'),
  ].filter((c): c is string => c !== null);
  if (charts.length === 0) parts.push(empty('No yes/no or label readout read by the fixed rule has story scores.'));
  parts.push(...charts);
  const hb = results.habits;
  if (!hb) {
    parts.push(empty('Sign changes and variance shares: not computed.'));
    return section('habits', title, parts);
  }
  const pairs = uniqueSorted(hb.signChanges.map((s) => `${s.readout_a}\u0000${s.readout_b}`));
  for (const key of pairs) {
    const [a, b] = key.split('\u0000') as [string, string];
    const rows = hb.signChanges.filter((s) => s.readout_a === a && s.readout_b === b);
    const count = hb.signChangeCounts.find((c) => c.readout_a === a && c.readout_b === b);
    const values = rows.flatMap((s) => [s.b_a, s.b_b]);
    const [lo, hi] = domainOf(values, [0], [-1, 1]);
    const m = Math.max(Math.abs(lo), Math.abs(hi));
    parts.push(
      figure(
        scatterChart({
          id: `chart-sign-${slug(a)}-${slug(b)}`,
          title: `Keying bias b per cell: ${a} against ${b}`,
          desc: `${count?.n_changed ?? 0} of ${count?.n_cells ?? rows.length} cells change sign (${count?.n_zero ?? 0} with b exactly 0).`,
          points: rows.map((s) => ({ x: s.b_a, y: s.b_b, highlight: s.changed === true, title: `${cellName(s.model, s.language)}: ${fmt(s.b_a, 3)} → ${fmt(s.b_b, 3)}${s.changed ? ' (sign change)' : ''}` })),
          domain: [-m, m],
          xLabel: `b, ${a}`,
          yLabel: `b, ${b}`,
          legend: { point: 'cell', highlight: 'b changes sign', quadrants: 'opposite signs' },
        }),
        `b changes sign in ${count?.n_changed ?? 0} of ${count?.n_cells ?? rows.length} cells (filled red; shaded: the opposite-sign quadrants; Same Judgment, Different Yes §6).`,
        {
          caption: `${a} against ${b} (habits_sign_changes.csv)`,
          csv: 'habits_sign_changes.csv',
          header: ['model', 'language', `b ${a}`, `b ${b}`, 'sign change'],
          rows: rows.map((s) => [s.model, s.language, fmt(s.b_a, 3), fmt(s.b_b, 3), s.changed === null ? '–' : s.changed ? 'yes' : 'no']),
        },
      ),
    );
  }
  const variance = hb.variance.filter((v) => v.interaction_share !== null);
  if (variance.length) {
    parts.push(
      figure(
        stackedChart({
          id: 'chart-habit-variance',
          title: 'Variance of each habit matrix (models × languages): model, language and interaction shares',
          desc: `${variance.length} readout and habit matrices.`,
          parts: ['model', 'language', 'interaction'],
          rows: variance.map((v) => ({ label: `${v.readout} ${v.habit}`, values: [v.model_share, v.language_share, v.interaction_share] })),
          axisLabel: 'share of the sum of squares around the grand mean',
        }),
        'Same Judgment, Different Yes §6: the two-way decomposition without replication of each complete cell matrix (cells outside it dropped, listed in the table).',
        {
          caption: 'Habit variance shares (habits_variance.csv)',
          csv: 'habits_variance.csv',
          header: ['readout', 'habit', 'models', 'languages', 'dropped', 'mean', 'model', 'language', 'interaction'],
          rows: hb.variance.map((v) => [v.readout, v.habit, String(v.n_models), String(v.n_languages), v.dropped, fmt(v.grand_mean, 3), fmt(v.model_share), fmt(v.language_share), fmt(v.interaction_share)]),
        },
      ),
    );
  } else {
    parts.push(empty('Variance shares: no habit matrix of at least 2 models × 2 languages with variance.'));
  }
  return section('habits', title, parts);
}

/* ---- Same Judgment, Different Yes §7, Figure 5b/5c ---- */

function polarityMatrix(id: string, title: string, rowsOf: readonly PolarityShare[], rowKey: (p: PolarityShare) => string, colKey: (p: PolarityShare) => string, caption: string, header: readonly [string, string]): string {
  const rowLabels = uniqueSorted(rowsOf.map(rowKey));
  const colLabels = uniqueSorted(rowsOf.map(colKey));
  const at = new Map(rowsOf.map((x) => [`${rowKey(x)}\u0000${colKey(x)}`, x]));
  return figure(
    matrixChart({
      id,
      title,
      desc: `${rowLabels.length} × ${colLabels.length} polarity shares.`,
      rowLabels,
      colLabels,
      scale: 'share',
      better: 'neither',
      legendLabel: 'polarity share',
      cell: (i, j) => {
        const x = at.get(`${rowLabels[i]}\u0000${colLabels[j]}`);
        return { value: x?.share ?? null, title: `${rowLabels[i]} × ${colLabels[j]}: ${x ? `${fmt(x.share)} (${x.n_polarity} of ${x.n_replies})` : 'no replies'}` };
      },
    }),
    caption,
    {
      caption: title,
      csv: 'polarity_shares.csv',
      header: [...header, 'replies', 'polarity', 'share'],
      rows: rowsOf.map((x) => [rowKey(x), colKey(x), String(x.n_replies), String(x.n_polarity), fmt(x.share)]),
    },
  );
}

/** Polarity shares of the negative-interrogative token given its judged sentence (§7, Figure 5). */
export function polaritySection(results: AnalysisResults): Section {
  const title = 'The negative-interrogative token';
  const intro = p(
    'Same Judgment, Different Yes §7, Figure 5: of the negative-interrogative yes/no replies with a decisive token and a decisive judged sentence, the share whose token follows the polarity mapping (yes with the named term; green); the rest follow the truth/agreement mapping (purple); white is an even split. Neither mapping is better, so neither is drawn red.',
  );
  const ag = results.agreement;
  if (!ag) return section('polarity', title, [intro, empty('Not computed: the data hold no replies read by two readers.')]);
  const all = ag.polarity.filter((x) => x.share !== null);
  if (all.length === 0) return section('polarity', title, [intro, empty('No negative-interrogative yes/no reply has both a decisive token and a decisive judged sentence.')]);
  const parts = [intro];
  const judges = uniqueSorted(all.map((x) => x.judge));
  for (const judge of judges) {
    const js = slug(judge);
    const of = (level: PolarityShare['level']) => all.filter((x) => x.judge === judge && x.level === level);
    if (judges.length > 1) parts.push(`<h3>${esc(judge)}</h3>`);
    const models = of('model');
    if (models.length) {
      parts.push(
        figure(
          rowChart({
            id: `chart-polarity-models-${js}`,
            title: `Polarity share per model (sentence read by ${judge})`,
            desc: models.map((x) => `${x.model} ${fmt(x.share)}`).join('; '),
            rows: models.map((x) => ({ label: x.model, bars: [{ x: x.share as number, series: 0, title: `${x.model}: ${fmt(x.share)} (${x.n_polarity} of ${x.n_replies})` }] })),
            domain: [0, 1],
            axisLabel: 'polarity share',
            series: [{ label: 'share of polarity-mapped tokens', shape: 'square' }],
            references: [{ x: 0.5, label: 'even split' }],
          }),
          'Per model, pooled over languages and wordings (Same Judgment, Different Yes §7, Figure 5).',
          {
            caption: `Polarity share per model, ${judge}`,
            csv: 'polarity_shares.csv',
            header: ['model', 'replies', 'polarity', 'share'],
            rows: models.map((x) => [x.model, String(x.n_replies), String(x.n_polarity), fmt(x.share)]),
          },
        ),
      );
    }
    const cells = of('cell');
    if (cells.length) parts.push(polarityMatrix(`hm-polarity-cells-${js}`, `Polarity share per model and language (${judge})`, cells, (x) => x.model, (x) => x.language, 'Cells: models (rows) by languages (columns) (Same Judgment, Different Yes §7, Figure 5).', ['model', 'language']));
    const wordings = of('wording_model');
    if (wordings.length) parts.push(polarityMatrix(`hm-polarity-wordings-${js}`, `Polarity share by wording and model (${judge})`, wordings, (x) => x.wording, (x) => x.model, 'Figure 5b of Same Judgment, Different Yes: wordings (concept pair and negated term) by model.', ['wording', 'model']));
    const constructions = of('construction');
    if (constructions.length) {
      const perModel = of('construction_model');
      parts.push(
        figure(
          rowChart({
            id: `chart-polarity-constructions-${js}`,
            title: `Polarity share by construction family and language (${judge})`,
            desc: `${constructions.length} language and construction families; bars are model means, dots single models.`,
            rows: constructions.map((x) => ({
              label: `${x.language} ${x.construction}`,
              bars: x.model_mean !== null ? [{ x: x.model_mean, series: 0, title: `mean of models ${fmt(x.model_mean)}; pooled ${fmt(x.share)} (${x.n_polarity} of ${x.n_replies})` }] : [],
              marks: perModel
                .filter((m) => m.language === x.language && m.construction === x.construction && m.share !== null)
                .map((m) => ({ x: m.share as number, series: 1, shape: 'dot' as const, title: `${m.model}: ${fmt(m.share)} (${m.n_polarity} of ${m.n_replies})` })),
            })),
            domain: [0, 1],
            axisLabel: 'polarity share',
            series: [{ label: 'mean of models', shape: 'square' }, { label: 'model', shape: 'dot' }],
            references: [{ x: 0.5, label: 'even split' }],
          }),
          'Figure 5c of Same Judgment, Different Yes: corresponding constructions across languages.',
          {
            caption: `Polarity share by language and construction, ${judge}`,
            csv: 'polarity_shares.csv',
            header: ['language', 'construction', 'replies', 'polarity', 'pooled share', 'mean of models'],
            rows: constructions.map((x) => [x.language, x.construction, String(x.n_replies), String(x.n_polarity), fmt(x.share), fmt(x.model_mean)]),
          },
        ),
      );
    }
  }
  parts.push(
    tableDetails({
      caption: 'Every polarity share (polarity_shares.csv)',
      csv: 'polarity_shares.csv',
      header: ['level', 'judge', 'model', 'language', 'construction', 'wording', 'replies', 'polarity', 'share', 'mean of models'],
      rows: ag.polarity.map((x) => [x.level, x.judge, x.model, x.language, x.construction, x.wording, String(x.n_replies), String(x.n_polarity), fmt(x.share), fmt(x.model_mean)]),
    }),
  );
  return section('polarity', title, parts);
}

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
