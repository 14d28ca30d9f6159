/**
 * The negative-interrogative token (Same Judgment, Different Yes §7, Figure 5b/5c): the share of
 * decisive tokens that follow the polarity mapping of their judged sentence, per model, per cell,
 * per wording and per construction family.
 */
import { escapeHtml as esc, fmtNumber as fmt, matrixChart, rowChart, slug, tableDetails } from '../../../../api/battery.js';
import type { AnalysisResults, PolarityShare } from '../../analysis/types.js';
import { figure, introducedSection, NO_AGREEMENT, uniqueSorted } from './section.js';
import type { Section } from './section.js';

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
  const s = introducedSection(
    'polarity',
    'The negative-interrogative token',
    'Same Judgment, Different Yes §7, Figure 5: of the negative-interrogative yes/no replies with a decisive token and a decisive judged sentence, the share whose token follows the polarity mapping (yes with the named term; green); the rest follow the truth/agreement mapping (purple); white is an even split. Neither mapping is better, so neither is drawn red.',
  );
  const ag = results.agreement;
  if (!ag) return s.none(NO_AGREEMENT);
  const all = ag.polarity.filter((x) => x.share !== null);
  if (all.length === 0) return s.none('No negative-interrogative yes/no reply has both a decisive token and a decisive judged sentence.');
  const parts: string[] = [];
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
  return s.of(parts);
}
