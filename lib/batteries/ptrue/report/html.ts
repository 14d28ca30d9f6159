/**
 * report.html for P(True): every section of summary.md (overview per model × benchmark, matching
 * regimes, the spans along each language axis of Figure 2, variance shares, matching effects, rank
 * changes and Kendall τ, language compliance, scorer agreement), the Q × R heat maps and the
 * reliability diagrams, drawn in the shared report shell (header with the models, the design and
 * the spend against the cap). Every table links its CSV; every figure has a legend and a caption
 * citing the paper's section; every colour scale says which end is better. No script library, no network.
 */
import {
  escapeHtml as esc,
  fmtNumber,
  htmlTable,
  matrixChart,
  readoutWarning,
  renderReportPage,
  reportFigure,
  rowChart,
  slug,
  tableDetails,
} from '../../../api/battery.js';
import type { ChartRow, ReliabilityBin, ReportMeta, ReportSection, TableSpec } from '../../../api/battery.js';
import type { PtrueResults } from '../analysis/analyzeRows.js';
import { cellMeans } from '../analysis/cells.js';
import type { ReliabilityDiagram } from '../analysis/reliability.js';
import { HIGHER_IS_BETTER, METRICS, type MetricName } from '../analysis/types.js';
import { PTRUE_LANGUAGES } from '../types.js';
import { PTRUE_PAPER, PTRUE_SECTION_TITLES as T } from './sectionTitles.js';
import { csvFiles } from './tables.js';

const n = (x: number): string => String(Math.round(x * 10) / 10);
const f = (x: number | null | undefined, d = 3): string => fmtNumber(x ?? null, d);

const METRIC_LABEL: Readonly<Record<MetricName, string>> = { accuracy: 'accuracy', brier: 'Brier', ece: 'ECE', auroc: 'AUROC' };
const better = (m: MetricName): string => (HIGHER_IS_BETTER[m] ? 'higher is better' : 'lower is better');

/** A section: its title (as in summary.md), where it comes from in the paper, and its parts. */
function section(id: keyof typeof T, cite: string, parts: readonly string[]): ReportSection {
  return { id, title: T[id], cite, body: parts };
}

/** A table and, under it, the link to the CSV file that holds its numbers. */
function tableWithCsv(spec: TableSpec, csv: string, folded = false): string {
  return folded ? tableDetails({ ...spec, csv }) : htmlTable({ ...spec, csv });
}

/** A figure whose caption cites the paper's section. */
function figure(svg: string, caption: string, where: string): string {
  return reportFigure(svg, caption, { cite: `${PTRUE_PAPER} ${where}` });
}

const p = (text: string): string => `<p>${esc(text)}</p>`;

/**
 * One reliability diagram: confidence on x, share correct on y, the diagonal of perfect
 * calibration, one bar per non-empty bin (its width the bin) and a dot at the bin's mean
 * confidence; a legend names the three.
 */
export function reliabilityChart(id: string, title: string, bins: readonly ReliabilityBin[]): string {
  const side = 220;
  const left = 40;
  const top = 28;
  const x = (v: number): number => left + v * side;
  const y = (v: number): number => top + side - v * side;
  const out: string[] = [];
  out.push(
    `<g class="legend"><rect x="${left}" y="6" width="10" height="10" fill="#0072b2" opacity="0.35"/><text class="legend" x="${left + 14}" y="15">share correct</text>` +
      `<circle cx="${left + 112}" cy="11" r="3" fill="#0072b2"/><text class="legend" x="${left + 119}" y="15">mean P(True)</text>` +
      `<line class="ref" x1="${left + 196}" x2="${left + 212}" y1="11" y2="11"/><text class="legend" x="${left + 216}" y="15">ideal</text></g>`,
  );
  out.push(`<rect class="frame" x="${left}" y="${top}" width="${side}" height="${side}"/>`);
  out.push(`<line class="ref" x1="${n(x(0))}" y1="${n(y(0))}" x2="${n(x(1))}" y2="${n(y(1))}"><title>perfect calibration</title></line>`);
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(`<text class="tick" x="${n(x(t))}" y="${n(top + side + 13)}" text-anchor="middle">${t}</text>`);
    out.push(`<text class="tick" x="${left - 5}" y="${n(y(t) + 4)}" text-anchor="end">${t}</text>`);
  }
  for (const b of bins) {
    if (b.n === 0 || b.accuracy === null || b.confidence === null) continue;
    const tip = `${b.lo.toFixed(3)}–${b.hi.toFixed(3)}: n ${b.n}, confidence ${b.confidence.toFixed(3)}, correct ${b.accuracy.toFixed(3)}`;
    out.push(`<rect class="bar" x="${n(x(b.lo))}" y="${n(y(b.accuracy))}" width="${n((b.hi - b.lo) * side)}" height="${n(b.accuracy * side)}" fill="#0072b2" opacity="0.35"><title>${esc(tip)}</title></rect>`);
    out.push(`<circle class="pt" cx="${n(x(b.confidence))}" cy="${n(y(b.accuracy))}" r="3"><title>${esc(tip)}</title></circle>`);
  }
  out.push(`<text class="axis-label" x="${n(left + side / 2)}" y="${n(top + side + 28)}" text-anchor="middle">P(True)</text>`);
  out.push(`<text class="axis-label" transform="translate(12 ${n(top + side / 2)}) rotate(-90)" text-anchor="middle">share correct</text>`);
  const w = left + side + 24;
  const h = top + side + 36;
  return (
    `<svg id="${esc(id)}" class="chart" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-labelledby="${esc(id)}-t ${esc(id)}-d">` +
    `<title id="${esc(id)}-t">${esc(title)}</title><desc id="${esc(id)}-d">${esc(`Reliability diagram, 15 bins: ${title}`)}</desc>${out.join('')}</svg>`
  );
}

/** Languages in the paper's order (en zh fr ja ko hi), others after them alphabetically. */
export function languageOrder(levels: readonly string[]): string[] {
  const rank = (l: string): number => {
    const i = (PTRUE_LANGUAGES as readonly string[]).indexOf(l);
    return i < 0 ? PTRUE_LANGUAGES.length : i;
  };
  return [...levels].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/* ---- sections ---- */

const OVERVIEW_SERIES = [
  { label: 'accuracy ↑', shape: 'dot' },
  { label: 'AUROC ↑', shape: 'ring' },
  { label: 'ECE ↓', shape: 'tick' },
  { label: 'Brier ↓', shape: 'diamond' },
] as const;
const OVERVIEW_METRICS: readonly MetricName[] = ['accuracy', 'auroc', 'ece', 'brier'];

function overviewSection(r: PtrueResults): ReportSection {
  const perBenchmark = r.benchmarks.map((b) => ({ b, m: cellMeans(r.cells.filter((c) => c.benchmark === b)) }));
  const perModel = r.benchmarks.flatMap((b) => r.models.map((model) => ({ b, model, m: cellMeans(r.cells.filter((c) => c.benchmark === b && c.model === model)) }))).filter((x) => x.m.cells > 0);
  const rows: ChartRow[] = perModel.map(({ b, model, m }) => ({
    label: model,
    group: b,
    marks: OVERVIEW_METRICS.flatMap((metric, i) => {
      const v = m[metric];
      return v === null ? [] : [{ x: v, series: i, shape: OVERVIEW_SERIES[i]!.shape, title: `${b} · ${model}: ${METRIC_LABEL[metric]} ${f(v)}` }];
    }),
  }));
  const chart = rowChart({
    id: 'overview-chart',
    title: 'Accuracy, AUROC, ECE and Brier per model and benchmark',
    desc: `Means over configuration cells of ${perModel.length} model × benchmark pairs.`,
    rows,
    domain: [0, 1],
    axisLabel: 'mean over configuration cells',
    series: OVERVIEW_SERIES,
  });
  return section('overview', `${PTRUE_PAPER} Table 2`, [
    p('Means over configuration cells (model × question × response × verifier language), each cell weighing the same. Accuracy and AUROC: higher is better; ECE (15 bins) and Brier: lower is better.'),
    figure(chart, 'Each model on each benchmark: ↑ marks metrics where higher is better, ↓ where lower is better.', 'Table 2'),
    tableWithCsv(
      {
        caption: 'Per benchmark',
        header: ['benchmark', 'cells', 'accuracy ↑', 'Brier ↓', 'ECE ↓', 'AUROC ↑', 'AUROC cells'],
        rows: perBenchmark.map(({ b, m }) => [b, String(m.cells), f(m.accuracy), f(m.brier), f(m.ece), f(m.auroc), String(m.aurocCells)]),
      },
      'cells.csv',
    ),
    tableWithCsv(
      {
        caption: 'Per model × benchmark',
        header: ['benchmark', 'model', 'cells', 'accuracy ↑', 'Brier ↓', 'ECE ↓', 'AUROC ↑', 'AUROC cells'],
        rows: perModel.map(({ b, model, m }) => [b, model, String(m.cells), f(m.accuracy), f(m.brier), f(m.ece), f(m.auroc), String(m.aurocCells)]),
      },
      'cells.csv',
    ),
  ]);
}

function regimesSection(r: PtrueResults): ReportSection {
  const rows = r.regimes.map((g) => [g.benchmark, g.regime, String(g.pooled.n), f(g.pooled.accuracy), f(g.pooled.ece), f(g.cellMean.ece), f(g.pooled.auroc), f(g.cellMean.auroc)]);
  return section('regimes', `${PTRUE_PAPER} Table 4, App. C`, [
    p('Which languages match: Q = R = V, Q = R ≠ V, and so on. Pooled over rows, and cell-level means (every configuration cell the same weight).'),
    tableWithCsv({ caption: 'Matching regimes: pooled and cell-level means', header: ['benchmark', 'regime', 'rows', 'accuracy ↑', 'ECE pooled ↓', 'ECE cells ↓', 'AUROC pooled ↑', 'AUROC cells ↑'], rows }, 'regimes.csv'),
  ]);
}

const AXIS_NAME: Readonly<Record<string, string>> = { q: 'question', r: 'response', v: 'verifier' };

function spansSection(r: PtrueResults): ReportSection {
  const parts: string[] = [p('Along each language axis, the mean of every metric at each of its levels (over the other two axes and the models): the spread between the lowest and the highest level is how far that axis moves the metric. A verifier language cannot move accuracy (the reply is the same), so its accuracy span is 0.')];
  for (const b of r.benchmarks) {
    const rows: ChartRow[] = [];
    for (const metric of METRICS) {
      for (const axis of ['q', 'r', 'v'] as const) {
        const levels = r.axes.filter((a) => a.benchmark === b && a.axis === axis && a.means[metric] !== null);
        if (levels.length === 0) continue;
        const values = levels.map((l) => l.means[metric] as number);
        const span = r.spans.find((s) => s.benchmark === b && s.axis === axis && s.metric === metric);
        rows.push({
          label: `${AXIS_NAME[axis]} language`,
          group: `${METRIC_LABEL[metric]} (${better(metric)})`,
          ranges: [{ lo: Math.min(...values), hi: Math.max(...values), series: 1, title: `span ${f(span?.span)}: ${span?.lowest ?? '–'} lowest, ${span?.highest ?? '–'} highest` }],
          marks: levels.map((l) => ({ x: l.means[metric] as number, series: 0, shape: 'dot' as const, title: `${AXIS_NAME[axis]} ${l.level}: ${METRIC_LABEL[metric]} ${f(l.means[metric])}` })),
        });
      }
    }
    const chart = rowChart({
      id: `spans-${slug(b)}`,
      title: `${b}: level means along each language axis`,
      desc: `${rows.length} axis × metric rows.`,
      rows,
      domain: [0, 1],
      axisLabel: 'mean over configuration cells',
      series: [
        { label: 'level mean', shape: 'dot' },
        { label: 'span (lowest to highest level)', shape: 'tick', colour: 1 },
      ],
    });
    parts.push(`<h3>${esc(b)}</h3>`, figure(chart, `${b}: how far each language axis moves each metric. Dots: the mean at each language; whisker: the span.`, 'Figure 2'));
  }
  parts.push(
    tableWithCsv(
      { caption: 'Spans: max − min of the level means', header: ['benchmark', 'axis', 'metric', 'span', 'lowest', 'highest'], rows: r.spans.map((s) => [s.benchmark, s.axis, s.metric, f(s.span), s.lowest ?? '–', s.highest ?? '–']) },
      'axis_spans.csv',
    ),
    tableWithCsv(
      { caption: 'Level means along each axis', header: ['benchmark', 'axis', 'level', 'cells', 'accuracy ↑', 'Brier ↓', 'ECE ↓', 'AUROC ↑'], rows: r.axes.map((a) => [a.benchmark, a.axis, a.level, String(a.means.cells), f(a.means.accuracy), f(a.means.brier), f(a.means.ece), f(a.means.auroc)]) },
      'axes.csv',
      true,
    ),
  );
  return section('spans', `${PTRUE_PAPER} Figure 2`, parts);
}

function sharesSection(r: PtrueResults): ReportSection {
  const table = (list: PtrueResults['accuracyShares'], caption: string, csv: string): string =>
    tableWithCsv({ caption, header: ['benchmark', 'outcome', 'term', 'share', 'models'], rows: list.flatMap((d) => d.mean.map((t) => [d.benchmark, d.outcome, t.term, f(t.share), String(t.n)])) }, csv);
  return section('shares', `${PTRUE_PAPER} §5, §6.3`, [
    p('The share of the variance each language factor explains, per model, averaged across models (provisional descriptions, not tests).'),
    table(r.accuracyShares, 'Accuracy: shares of reply-level variance', 'accuracy_shares.csv'),
    table(r.configurationShares, 'Confidence metrics: shares of cell-level variance', 'configuration_shares.csv'),
  ]);
}

function matchingSection(r: PtrueResults): ReportSection {
  const rows = r.matching.flatMap((m) =>
    (m.mixed?.coefficients ?? [])
      .filter((c) => c.name !== '(intercept)')
      .map((c) => {
        const ml = m.modelLevel.find((x) => x.name === c.name);
        return [m.benchmark, m.metric, c.name, f(c.estimate), `[${f(c.lo)}, ${f(c.hi)}]`, f(ml?.mean), ml ? `${ml.sameSign}/${ml.models}` : '–'];
      }),
  );
  return section('matching', `${PTRUE_PAPER} §5`, [
    p('What matching two languages adds to each metric: REML with a random intercept per model, Wald 95 % intervals, and the same regression model by model.'),
    tableWithCsv({ caption: 'Matching effects', header: ['benchmark', 'metric', 'term', 'estimate', '95 % interval', 'model-level mean', 'models same sign'], rows }, 'matching_effects.csv'),
  ]);
}

function ranksSection(r: PtrueResults): ReportSection {
  return section('ranks', `${PTRUE_PAPER} App. E`, [
    p('Does the order of the models change along the path all-English → question localised → question and response → all three localised? Kendall τ-b between consecutive steps, with the pairs that reverse; the reference is how much τ varies between single configurations and under an all-English bootstrap.'),
    tableWithCsv(
      {
        caption: 'Rank changes along the language path',
        header: ['benchmark', 'metric', 'from', 'to', 'τ-b', 'reversed pairs', 'of significant'],
        rows: r.rankChanges.map((c) => [c.benchmark, c.metric, c.from, c.to, f(c.tau, 2), `${c.reversed}/${c.pairs}`, c.significantPairs === null ? '–' : `${c.significantReversed}/${c.significantPairs}`]),
      },
      'rank_changes.csv',
    ),
    tableWithCsv(
      {
        caption: 'Reference τ',
        header: ['benchmark', 'metric', 'single-config median τ', 'all-English bootstrap mean τ', 'bootstrap 95 %'],
        rows: r.rankReferences.map((x) => [x.benchmark, x.metric, f(x.singleConfigMedianTau, 2), f(x.bootstrap.mean, 2), `[${f(x.bootstrap.lo, 2)}, ${f(x.bootstrap.hi, 2)}]`]),
      },
      'rank_reference.csv',
    ),
  ]);
}

function complianceSection(r: PtrueResults): ReportSection | undefined {
  if (r.compliance.length === 0) return undefined;
  return section('compliance', `${PTRUE_PAPER} §6.6, App. C`, [
    p('The share of replies written in the language the prompt asked for, by the language identifier.'),
    tableWithCsv({ caption: 'Replies in the requested language', header: ['benchmark', 'requested', 'replies', 'in that language ↑'], rows: r.compliance.map((c) => [c.benchmark, c.r, String(c.replies), f(c.share)]) }, 'compliance.csv'),
  ]);
}

function scorersSection(r: PtrueResults): ReportSection | undefined {
  if (r.scorers.length === 0) return undefined;
  return section('scorers', `${PTRUE_PAPER} §6.2`, [
    p('Multiple-choice accuracy by exact option match and by the judge, per question language: how much the scorer decides.'),
    tableWithCsv({ caption: 'Exact option match against the judge', header: ['benchmark', 'q', 'replies', 'exact match', 'judge'], rows: r.scorers.map((s) => [s.benchmark, s.q, String(s.replies), f(s.primary), f(s.alternative)]) }, 'scorers.csv'),
  ]);
}

const HEAT: readonly MetricName[] = ['accuracy', 'auroc', 'ece'];

function heatmapSection(r: PtrueResults): ReportSection {
  const parts: string[] = [p('Means over models and verifier languages per question (rows) × response language (columns). In every heat map blue is the better end and red the worse: high accuracy and AUROC are blue, and so is a low ECE.')];
  for (const b of r.benchmarks) {
    const cells = r.qr.filter((c) => c.benchmark === b);
    const qs = languageOrder([...new Set(cells.map((c) => c.q))]);
    const rs = languageOrder([...new Set(cells.map((c) => c.r))]);
    const charts = HEAT.map((metric) =>
      figure(
        matrixChart({
          id: `qr-${slug(b)}-${metric}`,
          title: `${b}: ${METRIC_LABEL[metric]} by question (rows) and response language (columns)`,
          desc: `Mean ${METRIC_LABEL[metric]} over models and verifier languages, per question × response language; ${better(metric)}.`,
          rowLabels: qs.map((q) => `Q ${q}`),
          colLabels: rs.map((x) => `R ${x}`),
          cell: (i, j) => {
            const c = cells.find((x) => x.q === qs[i] && x.r === rs[j]);
            const v = c?.means[metric] ?? null;
            return { value: v, title: `Q ${qs[i]} × R ${rs[j]}: ${METRIC_LABEL[metric]} ${f(v)}` };
          },
          scale: 'share',
          better: HIGHER_IS_BETTER[metric] ? 'high' : 'low',
          legendLabel: METRIC_LABEL[metric],
        }),
        `${b}: ${METRIC_LABEL[metric]}, ${better(metric)} (blue).`,
        '§6.1',
      ),
    );
    const rows = cells.map((c) => [c.q, c.r, f(c.means.accuracy), f(c.means.auroc), f(c.means.ece), f(c.means.brier)]);
    parts.push(`<h3>${esc(b)}</h3><div class="matrices">${charts.join('')}</div>`, tableWithCsv({ caption: `${b}: Q × R means`, header: ['q', 'r', 'accuracy ↑', 'AUROC ↑', 'ECE ↓', 'Brier ↓'], rows }, 'qr.csv', true));
  }
  return section('qr', `${PTRUE_PAPER} §6.1`, parts);
}

function reliabilitySection(diagrams: readonly ReliabilityDiagram[]): ReportSection {
  const benchmarks = [...new Set(diagrams.map((d) => d.benchmark))];
  const parts = benchmarks.map((b) => {
    const mine = diagrams.filter((d) => d.benchmark === b);
    const charts = mine.map((d) => figure(reliabilityChart(`rel-${slug(b)}-${slug(d.setting)}`, `${b}: ${d.setting}`, d.bins), `${d.setting} (${d.n} rows)`, 'App. E'));
    const rows = mine.flatMap((d) => d.bins.filter((x) => x.n > 0).map((x) => [d.setting, `${x.index + 1}`, String(x.n), f(x.confidence), f(x.accuracy)]));
    return `<h3>${esc(b)}</h3><div class="row-of-charts">${charts.join('')}</div>${tableWithCsv({ caption: `${b}: reliability bins`, header: ['setting', 'bin', 'n', 'mean P(True)', 'share correct'], rows }, 'reliability.csv', true)}`;
  });
  return section('reliability', `${PTRUE_PAPER} App. E`, [
    p('Pooled over models and the target languages at each step of the path all-English → question localised → question and response → all three localised. Bars: share correct per P(True) bin; dots at the bin\'s mean P(True); dashed: perfect calibration — the closer the dots to it, the better.'),
    ...parts,
  ]);
}

/** The battery's sections, in page order (sections without data are left out). */
export function ptrueSections(r: PtrueResults): ReportSection[] {
  return [overviewSection(r), regimesSection(r), spansSection(r), sharesSection(r), matchingSection(r), ranksSection(r), complianceSection(r), scorersSection(r), heatmapSection(r), reliabilitySection(r.reliability)].filter(
    (s): s is ReportSection => s !== undefined,
  );
}

/** The design, for the shell's header. */
function design(r: PtrueResults): [string, string][] {
  const axis = (a: 'q' | 'r' | 'v'): string => languageOrder([...new Set(r.cells.map((c) => c[a]))]).join(', ') || '–';
  return [
    ['Benchmarks', r.benchmarks.join(', ') || '–'],
    ['Question languages', axis('q')],
    ['Response languages', axis('r')],
    ['Verifier languages', axis('v')],
    ['Item rows (model × item × q × r × v)', String(r.rows)],
    ['Configuration cells', String(r.cells.length)],
  ];
}

/**
 * A whole report.html: the sections in the shared report shell.
 * @example await writeFile('report.html', renderPtrueReport(results, { campaign: 'ptrue-demo', spend: { spentUsd: 0.4, capUsd: 5 } }))
 */
export function renderPtrueReport(r: PtrueResults, meta: ReportMeta): string {
  const unread = readoutWarning(r.readout);
  return renderReportPage(
    {
      study: 'P(True)',
      paper: PTRUE_PAPER,
      simulated: r.simulated,
      simulatedNote: 'Every reply comes from simulated models: the numbers test the pipeline, not any model.',
      notices: unread === undefined ? [] : [unread],
      models: r.models,
      design: design(r),
      sections: ptrueSections(r),
      files: [...csvFiles(r).map(([name]) => name), 'summary.md'],
    },
    meta,
  );
}
