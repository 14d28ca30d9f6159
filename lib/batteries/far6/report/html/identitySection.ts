/**
 * Model identity across languages (Same Judgment, Different Yes §5, Table 6, Figure 3a/3b):
 * nearest-neighbour counts beside chance, class means of cell pairs with story-bootstrap
 * intervals, and each model's language-pair values.
 */
import { domainOf, escapeHtml as esc, fmtNumber as fmt, rowChart, slug, tableDetails } from '../../../../api/battery.js';
import type { ChartRow, RowMark } from '../../../../api/battery.js';
import type { AnalysisResults, ClassEstimate, IdentityMetric } from '../../analysis/types.js';
import { chartValues, empty, figure, introducedSection, NO_IDENTITY, NO_IDENTITY_READOUT, uniqueSorted } from './section.js';
import type { Section } from './section.js';

/** The identity metrics as charts and tables name them. */
const METRIC_LABEL: Readonly<Record<IdentityMetric, string>> = { residual_r: 'residual r', story_r: 'story-level r', mean_abs_diff: 'mean |Δ|' };

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
  const id = results.identity;
  const s = introducedSection(
    'identity',
    'Model identity across languages',
    `Same Judgment, Different Yes §5, Table 6 and Figure 3a/3b: for each cell, whether its nearest other cell (on ≥ ${results.minCommonStories} common stories) is the same model in another language, counted beside a uniform-random neighbour; class means of cell pairs with 95 % story-bootstrap intervals${id ? ` (${id.draws} draws, seed ${id.seed})` : ''}; and each model's language-pair values.`,
  );
  if (!id) return s.none(NO_IDENTITY);
  const parts: string[] = [];
  if (id.readouts.length === 0) parts.push(empty(NO_IDENTITY_READOUT));
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
      const values = chartValues(rows);
      charts.push(
        `<div class="small">${rowChart({
          id: `chart-identity-classes-${rs}-${slug(metric)}`,
          title: `${readout}: ${METRIC_LABEL[metric]} by class of cell pair, with 95 % bootstrap intervals`,
          desc: rows.map((r) => `${r.label} ${r.marks?.[0]?.title ?? ''}`).join('; '),
          rows,
          // Correlations and differences of the contrasts both lie in [-1, 1], whatever the metric.
          domain: domainOf(values, [0], [-1, 1]),
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
      const values = chartValues(rRows);
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
  return s.of(parts);
}
