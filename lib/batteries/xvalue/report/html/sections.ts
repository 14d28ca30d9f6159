/**
 * The sections of the X-Value report.html (Towards Cross-lingual Values Judgment §6): the overall and category table (Table 2),
 * languages (Table 3), a language × category accuracy heat map per model and strategy (Appendix B,
 * Figure 1), precision / recall / F1 per checkpoint (Figure 3), the lowest cells (§6.6) and step
 * 1's agreement. Every chart has its numbers in a table beside it; a section without data says so.
 */
import { escapeHtml as esc, htmlTable, matrixChart, reportFigure, rowChart, slug, tableDetails } from '../../../../api/battery.js';
import type { ChartRow, ReportSection, TableSpec } from '../../../../api/battery.js';
import type { XvalueResults } from '../../analysis/types.js';
import { CATEGORIES, CATEGORY_NAMES, CHECKPOINTS, CHECKPOINT_NAMES, LANGUAGES, STRATEGIES } from '../../types.js';
import type { Strategy } from '../../types.js';
import { STRATEGY_TITLE, pct, rankText } from '../format.js';
import { categoriesIn, languageTable, languagesIn, overallTable } from '../paperTables.js';

/** The paper the sections cite. */
export const XVALUE_PAPER = 'Towards Cross-lingual Values Judgment';

type Section = ReportSection;

/** A section of the shell; `where` is its place in the paper (cited beside its title). */
function section(id: string, title: string, parts: readonly string[], where?: string): Section {
  return { id, title, body: parts, ...(where ? { cite: `${XVALUE_PAPER} ${where}` } : {}) };
}

const p = (text: string): string => `<p>${esc(text)}</p>`;
const empty = (text: string): string => `<p class="empty">${esc(text)}</p>`;

/** A figure whose caption cites the paper's section. */
function figure(svg: string, caption: string, where: string, table?: TableSpec): string {
  return reportFigure(svg, caption, { cite: `${XVALUE_PAPER} ${where}`, ...(table ? { table } : {}) });
}

/** A section that is one table and the paragraph on how to read it. */
interface TableSection {
  readonly id: string;
  readonly title: string;
  /** Its place in the paper. */
  readonly where?: string;
  readonly intro: string;
  /** The note that stands in for a table without rows. */
  readonly none: string;
  /** The title of the section without rows, where it is shorter. */
  readonly noneTitle?: string;
  readonly table: TableSpec;
  /** Folded under its caption (a long table beside a short one). */
  readonly folded?: boolean;
}

function tableSection(s: TableSection): Section {
  if (s.table.rows.length === 0) return section(s.id, s.noneTitle ?? s.title, [empty(s.none)], s.where);
  return section(s.id, s.title, [p(s.intro), s.folded ? tableDetails(s.table) : htmlTable(s.table)], s.where);
}

const strategiesOf = (r: XvalueResults): Strategy[] => STRATEGIES.filter((s) => r.overall.some((o) => o.strategy === s));

/** Table 2: overall accuracy, Acc0, Acc1, their gap, the categories and their spread. */
export function overallSection(r: XvalueResults): Section {
  if (r.overall.length === 0) return section('overall', 'Overall and by category', [empty('No verdicts to analyse.')], 'Table 2');
  const categories = categoriesIn(r);
  const parts = [p('Accuracy in %: Acc0 on values-appropriate pairs, Acc1 on values-inappropriate pairs (Towards Cross-lingual Values Judgment Table 2). avg., std. (population) and range are over the category accuracies.')];
  for (const strategy of strategiesOf(r)) parts.push(htmlTable({ caption: STRATEGY_TITLE[strategy], csv: ['overall.csv', 'by_category.csv'], ...overallTable(r, strategy) }));
  // Acc0 and Acc1 side by side: the two strategies err in opposite directions (§6.2).
  const rows: ChartRow[] = r.overall.map((o) => ({
    label: `${o.model} · ${o.strategy}`,
    group: o.model,
    marks: [
      { x: (o.accuracy_negative ?? NaN) * 100, series: 0, shape: 'dot' as const, title: `${o.model} ${o.strategy}: Acc0 ${pct(o.accuracy_negative)} %` },
      { x: (o.accuracy_positive ?? NaN) * 100, series: 1, shape: 'diamond' as const, title: `${o.model} ${o.strategy}: Acc1 ${pct(o.accuracy_positive)} %` },
    ].filter((m) => Number.isFinite(m.x)),
  }));
  parts.push(
    figure(
      rowChart({
        id: 'acc-split',
        title: 'Acc0 and Acc1 per model and strategy',
        desc: 'Accuracy on appropriate (Acc0) and inappropriate (Acc1) pairs for each model and prompting strategy.',
        rows,
        domain: [0, 100],
        axisLabel: 'accuracy (%)',
        series: [
          { label: 'Acc0 (appropriate)', shape: 'dot' },
          { label: 'Acc1 (inappropriate)', shape: 'diamond' },
        ],
      }),
      'Acc0 well above Acc1: the judge misses violations (false negatives, def-only); Acc1 above Acc0: it over-flags appropriate answers (false positives, the rubric).',
      '§6.2',
    ),
  );
  parts.push(`<p>Categories: ${categories.map((c) => `${esc(c)} = ${esc(CATEGORY_NAMES[c])}`).join('; ')}.</p>`);
  return section('overall', 'Overall and by category', parts, 'Table 2');
}

/** Table 3: accuracy per language, with avg., std. and range across languages. */
export function languageSection(r: XvalueResults): Section {
  if (languagesIn(r).length === 0) return section('languages', 'By language', [empty('No verdicts to analyse.')], 'Table 3');
  const parts = [p('Accuracy in % per language (Towards Cross-lingual Values Judgment Table 3); avg., std. (population) and range over the languages.')];
  for (const strategy of strategiesOf(r)) parts.push(htmlTable({ caption: STRATEGY_TITLE[strategy], csv: ['by_language.csv', 'overall.csv'], ...languageTable(r, strategy) }));
  return section('languages', 'By language', parts, 'Table 3');
}

/** Appendix B, Figure 1: one language × category heat map of accuracy per model and strategy. */
export function heatmapSection(r: XvalueResults): Section {
  const groups = r.overall.map((o) => [o.model, o.strategy] as const);
  if (groups.length === 0) return section('heatmaps', 'Language × category heat maps', [empty('No verdicts to analyse.')], 'Appendix B, Figure 1');
  const languages = LANGUAGES.filter((l) => r.cells.some((c) => c.language === l));
  const categories = CATEGORIES.filter((c) => r.cells.some((x) => x.category === c));
  const charts = groups.map(([model, strategy]) => {
    const cell = (i: number, j: number) => {
      const c = r.cells.find((x) => x.model === model && x.strategy === strategy && x.language === languages[i] && x.category === categories[j]);
      if (!c || c.accuracy === null) return { value: null, title: `${languages[i]} × ${categories[j]}: no verdict` };
      return { value: c.accuracy, title: `${c.language} × ${c.category}: ${pct(c.accuracy)} % (n = ${c.n}; FP ${c.fp}, FN ${c.fn}${c.abstained ? `, invalid ${c.abstained}` : ''})` };
    };
    const svg = matrixChart({
      id: `heat-${slug(model)}-${strategy}`,
      title: `Accuracy of ${model}, ${strategy}`,
      desc: `Overall-verdict accuracy of ${model} under the ${strategy} prompt per language (rows) and issue category (columns).`,
      rowLabels: languages,
      colLabels: categories,
      cell,
      scale: 'share',
      better: 'high',
      legendLabel: 'accuracy',
    });
    return reportFigure(svg, `${model} · ${STRATEGY_TITLE[strategy]}: accuracy, blue better`, { cite: `${XVALUE_PAPER} Appendix B, Figure 1`, className: 'm-caption' });
  });
  return section('heatmaps', 'Language × category heat maps', [
    p('Overall-verdict accuracy per language and category (Towards Cross-lingual Values Judgment Appendix B, Figure 1): blue is better (towards 100 %), red worse (below 50 %), white at 50 %; grey cells hold no pair. Hover a cell for n and its false positives / negatives.'),
    `<div class="matrices">${charts.join('')}</div>`,
    '<p class="csv-link">CSV: <a href="cells.csv">cells.csv</a></p>',
  ], 'Appendix B, Figure 1');
}

/** §6.5, Figure 3: precision, recall and F1 for the overall verdict and each checkpoint. */
export function checkpointSection(r: XvalueResults): Section {
  if (r.checkpoints.length === 0) return section('checkpoints', 'Precision, recall and F1', [empty('No verdicts to analyse.')], '§6.5, Figure 3');
  const table: TableSpec = {
    caption: 'Values-inappropriate (Fail) as the positive class; checkpoint A compares "the Question has a problem" with the annotation',
    csv: 'checkpoints.csv',
    header: ['Model', 'Strategy', 'Target', 'Precision', 'Recall', 'F1', 'TP', 'FP', 'FN', 'TN', 'invalid', 'missing'],
    rows: r.checkpoints.map((c) => [c.model, c.strategy, c.target, pct(c.precision), pct(c.recall), pct(c.f1), String(c.tp), String(c.fp), String(c.fn), String(c.tn), String(c.abstained), String(c.missing)]),
  };
  const rubric = r.checkpoints.filter((c) => c.strategy === 'rubric');
  const models = [...new Set(rubric.map((c) => c.model))].sort();
  const targets = ['overall', ...CHECKPOINTS] as const;
  const rows: ChartRow[] = targets.map((t) => ({
    label: t === 'overall' ? 'overall' : `${t}`,
    marks: models.flatMap((m, k) => {
      const c = rubric.find((x) => x.model === m && x.target === t);
      return c && c.f1 !== null ? [{ x: c.f1 * 100, series: k, shape: 'dot' as const, title: `${m}, ${t}: F1 ${pct(c.f1)} % (P ${pct(c.precision)}, R ${pct(c.recall)})` }] : [];
    }),
  }));
  const parts = [
    p('F1 = 2TP / (2TP + FP + FN + invalid positives): an unreadable verdict on an inappropriate pair is a miss. F1 is "–" only with nothing to find and nothing flagged.'),
    ...(models.length > 0
      ? [
          figure(
            rowChart({ id: 'f1-checkpoints', title: 'Rubric F1 per checkpoint', desc: 'F1 of each model on the overall rubric verdict and on checkpoints A–H.', rows, domain: [0, 100], axisLabel: 'F1 (%)', series: models.map((m) => ({ label: m, shape: 'dot' as const })) }),
            `Checkpoints: ${CHECKPOINTS.map((c) => `${c} = ${CHECKPOINT_NAMES[c]}`).join('; ')}.`,
            '§6.5, Figure 3',
          ),
        ]
      : []),
    htmlTable(table),
  ];
  return section('checkpoints', 'Precision, recall and F1', parts, '§6.5, Figure 3');
}

/** §6.6 / Appendix B: each model's lowest cells and their error split. */
export function lowestCellsSection(r: XvalueResults): Section {
  return tableSection({
    id: 'lowest',
    title: 'Lowest language × category cells',
    noneTitle: 'Lowest cells',
    where: '§6.6',
    none: 'No cell with a verdict.',
    intro: 'The cells with the lowest accuracy per model and strategy (Towards Cross-lingual Values Judgment §6.6) and whether their errors are mostly false positives (over-flagging) or false negatives (missed violations): dominant when above two thirds. Cells of equal accuracy share a rank, and a tie names how many other cells have the same accuracy; which of them is listed (more pairs first, then language and category order) is a convention.',
    table: {
      caption: 'Lowest cells',
      csv: 'lowest_cells.csv',
      header: ['Model', 'Strategy', 'Rank', 'Language', 'Category', 'n', 'Acc', 'FP', 'FN', 'FP share', 'Errors'],
      rows: r.lowestCells.map((c) => [c.model, c.strategy, rankText(c), c.language, c.category, String(c.n), pct(c.accuracy), String(c.fp), String(c.fn), pct(c.fp_share), c.dominant_error]),
    },
  });
}

/** Step 1 against the annotated scope and nature. */
export function step1Section(r: XvalueResults): Section {
  return tableSection({
    id: 'step1',
    title: 'Step 1 against the annotation: scope and nature',
    where: 'Appendix B.4',
    none: 'No rubric step 1 to compare.',
    intro: 'How often step 1 names the annotated scope (Global/Regional) and nature (Consensus/Pluralism); a wrong nature gives step 2 the other checklist (Towards Cross-lingual Values Judgment Appendix B.4).',
    folded: true,
    table: {
      caption: 'Agreement with the annotation (an unreadable reading counts as disagreement)',
      csv: 'step1_agreement.csv',
      header: ['Model', 'Language', 'Facet', 'n', 'Agreement', 'Global→Regional / Consensus→Pluralism', 'Regional→Global / Pluralism→Consensus', 'invalid', 'missing'],
      rows: r.step1Agreement.map((s) => [s.model, s.language, s.facet, String(s.n), pct(s.agreement), String(s.first_read_as_second), String(s.second_read_as_first), String(s.invalid), String(s.missing)]),
    },
  });
}

/** summary.md's Coverage: per model and strategy the pairs asked, those with a verdict, the unreadable and the unanswered. */
export function coverageSection(r: XvalueResults): Section {
  return tableSection({
    id: 'coverage',
    title: 'Coverage',
    none: 'No verdict.',
    intro: 'An invalid (unreadable) verdict counts as wrong; a missing one (no reply) is left out of every rate.',
    table: {
      caption: 'Coverage per model and strategy',
      csv: 'overall.csv',
      header: ['Model', 'Strategy', 'asked', 'with a verdict', 'invalid', 'missing'],
      rows: r.overall.map((o) => [o.model, o.strategy, String(o.n + o.missing), String(o.n), String(o.abstained), String(o.missing)]),
    },
  });
}
