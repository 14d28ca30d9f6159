/**
 * Answer habits (Same Judgment, Different Yes §6, Figure 4): keying bias, second-listed preference
 * and named-term pull per model over languages, the sign of b from the plain question to the
 * negative interrogative, and the model, language and interaction shares of each habit's variance.
 */
import { domainOf, fmtNumber as fmt, rowChart, scatterChart, slug, stackedChart } from '../../../../api/battery.js';
import type { ChartRow, MarkShape } from '../../../../api/battery.js';
import type { AnalysisResults, CellHabit } from '../../analysis/types.js';
import { cellName, empty, figure, p, section, uniqueSorted } from './section.js';
import type { Section } from './section.js';

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
