/**
 * summary.md: the paper's tables for the campaign's models (Towards Cross-lingual Values Judgment Table 2 overall and by
 * category, Table 3 by language, Figure 3's precision / recall / F1, §6.6's lowest cells) and
 * step 1's agreement with the annotation. Percentages with two decimals, "–" for undefined.
 */
import { mdTable, spendMarkdown } from '../../../api/battery.js';
import type { ReportMeta } from '../../../api/battery.js';
import type { XvalueResults } from '../analysis/types.js';
import { CHECKPOINTS, STRATEGIES, type Strategy } from '../types.js';
import { STRATEGY_TITLE, pct, rankText } from './format.js';
import { languageTable, overallTable, type TextTable } from './paperTables.js';

/** One paper table per strategy that has rows, under its heading. */
function byStrategy(heading: string, table: (r: XvalueResults, strategy: Strategy) => TextTable, r: XvalueResults): string[] {
  const out: string[] = [heading];
  for (const strategy of STRATEGIES) {
    const t = table(r, strategy);
    if (t.rows.length === 0) continue;
    out.push(`### ${STRATEGY_TITLE[strategy]}`, mdTable(t.header, t.rows));
  }
  return out;
}

function checkpoints(r: XvalueResults): string[] {
  const out: string[] = ['## Precision, recall and F1 (values-inappropriate as the positive class; Towards Cross-lingual Values Judgment §6.5, Figure 3)'];
  const models = [...new Set(r.checkpoints.map((c) => c.model))].sort();
  const overall = r.checkpoints.filter((c) => c.target === 'overall');
  out.push(
    mdTable(
      ['Model', 'Strategy', 'Precision', 'Recall', 'F1', 'n', 'inappropriate'],
      overall.map((c) => [c.model, c.strategy, pct(c.precision), pct(c.recall), pct(c.f1), String(c.n), String(c.n_positive)]),
    ),
  );
  const rubric = models.filter((m) => r.checkpoints.some((c) => c.model === m && c.target === 'A'));
  if (rubric.length > 0) {
    out.push('F1 per checkpoint (rubric; A is recorded but never vetoes):');
    out.push(
      mdTable(
        ['Model', ...CHECKPOINTS.map((c) => `${c} F1`)],
        rubric.map((m) => [m, ...CHECKPOINTS.map((c) => pct(r.checkpoints.find((x) => x.model === m && x.target === c)?.f1))]),
      ),
    );
  }
  return out;
}

function lowest(r: XvalueResults): string[] {
  if (r.lowestCells.length === 0) return [];
  return [
    '## Lowest language × category cells (Towards Cross-lingual Values Judgment §6.6, Appendix B)',
    mdTable(
      ['Model', 'Strategy', 'Rank', 'Cell', 'n', 'Acc', 'FP', 'FN', 'Errors'],
      r.lowestCells.map((c) => [c.model, c.strategy, rankText(c), `${c.language} × ${c.category}`, String(c.n), pct(c.accuracy), String(c.fp), String(c.fn), c.dominant_error]),
    ),
    ...(r.lowestCells.some((c) => c.ties > 0)
      ? ['Cells of equal accuracy share a rank; "tied with k others" counts the cells at the same accuracy that are not listed as well as those that are. Which tied cell is listed (more pairs first, then language and category order) is a convention, not a finding.']
      : []),
  ];
}

function step1(r: XvalueResults): string[] {
  const all = r.step1Agreement.filter((s) => s.language === 'all');
  if (all.length === 0) return [];
  const models = [...new Set(all.map((s) => s.model))].sort();
  return [
    '## Step 1 against the annotation (scope and nature, Towards Cross-lingual Values Judgment §4.1)',
    mdTable(
      ['Model', 'Scope agreement', 'Global read Regional', 'Regional read Global', 'Nature agreement', 'Consensus read Pluralism', 'Pluralism read Consensus', 'invalid (nature)'],
      models.map((m) => {
        const s = all.find((x) => x.model === m && x.facet === 'scope');
        const n = all.find((x) => x.model === m && x.facet === 'nature');
        return [m, pct(s?.agreement), String(s?.first_read_as_second ?? 0), String(s?.second_read_as_first ?? 0), pct(n?.agreement), String(n?.first_read_as_second ?? 0), String(n?.second_read_as_first ?? 0), String(n?.invalid ?? 0)];
      }),
    ),
  ];
}

/**
 * The Markdown summary of the results.
 * @example await writeFile('summary.md', xvalueSummaryMarkdown(results, { campaign: 'xvalue-demo' }))
 */
export function xvalueSummaryMarkdown(r: XvalueResults, meta: ReportMeta): string {
  const simulated = meta.simulated === true || r.simulated;
  const coverage = r.overall.map((o) => [o.model, o.strategy, String(o.n + o.missing), String(o.n), String(o.abstained), String(o.missing)]);
  return [
    `# X-Value results: ${meta.campaign}${simulated ? ' (SIMULATED)' : ''}`,
    ...(simulated ? ['> These results rest on simulated judges, not on real models.'] : []),
    ...(meta.source ? [`Source: ${meta.source}`] : []),
    ...spendMarkdown(meta.spend),
    'Shares in %. Acc0: accuracy on values-appropriate pairs; Acc1: on values-inappropriate pairs. avg., std. and range are taken over the category (or language) accuracies; std. is the population standard deviation, as in Towards Cross-lingual Values Judgment. An invalid (unreadable) verdict counts as wrong; a missing one (no reply) is left out. "–": undefined (e.g. Acc1 of a language with no inappropriate pair, F1 with nothing to find and nothing flagged).',
    ...byStrategy('## Overall and by category (Towards Cross-lingual Values Judgment Table 2)', overallTable, r),
    ...byStrategy('## By language (Towards Cross-lingual Values Judgment Table 3)', languageTable, r),
    ...checkpoints(r),
    ...lowest(r),
    ...step1(r),
    '## Coverage',
    mdTable(['Model', 'Strategy', 'asked', 'with a verdict', 'invalid', 'missing'], coverage),
    '',
  ].join('\n\n');
}
