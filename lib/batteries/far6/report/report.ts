/**
 * Result tables and the summary of a FAR-6 analysis (Same Judgment, Different Yes §4 Figure 2a, §6 Table 4): CSV for
 * machines, summary.md and report.html for people, and a short console table.
 */
import { fmtNumber, mdTable, spendMarkdown, toCsv } from '../../../api/battery.js';
import { HEADLINE_PAIRS, matchesReadout as matches } from './html/headline.js';
import { renderReportHtml } from './html/renderReport.js';
import { REPLIES_READ_HEADER, repliesReadRows } from './repliesRead.js';
import { STUDY_FILE_LINES, STUDY_FILES, studyCsvFiles, studySummarySections } from './studyReport.js';
import type {
  AnalysisResults,
  CellHabit,
  CellSummaryRow,
  ReadoutComparison,
  ReadoutConvergence,
  ReplyTotalsRow,
  ReportMeta,
  StoryScore,
} from '../analysis/types.js';

export const RESULT_FILES = [
  'story_scores.csv',
  'cell_habits.csv',
  'readout_comparisons.csv',
  'readout_convergence.csv',
  'cell_summary.csv',
  'reply_totals.csv',
  ...STUDY_FILES,
  'summary.md',
  'report.html',
] as const;

/** What report.html links to: every other result file. */
const LINKED_FILES: readonly string[] = RESULT_FILES.filter((f) => f !== 'report.html');

const STORY_COLUMNS: (keyof StoryScore & string)[] = ['model', 'language', 'readout', 'story', 'story_group', 's', 'b', 'n_pairs'];
const HABIT_COLUMNS: (keyof CellHabit & string)[] = ['model', 'language', 'readout', 'n_stories', 'keying_bias', 'second_listed_pref', 'n_stories_position', 'named_term_pull'];
const COMPARISON_COLUMNS: (keyof ReadoutComparison & string)[] = ['model', 'language', 'readout_a', 'readout_b', 'n_common', 'r', 'mean_abs_diff'];
const CONVERGENCE_COLUMNS: (keyof ReadoutConvergence & string)[] = ['readout_a', 'readout_b', 'n_cells', 'median_r', 'q10_r', 'q90_r', 'median_abs_diff'];
const SUMMARY_COLUMNS: (keyof CellSummaryRow & string)[] = ['model', 'language', 'form', 'constraint', 'reader', 'replies', 'decisive', 'n_p', 'decisive_share', 'p_share'];
const TOTALS_COLUMNS: (keyof ReplyTotalsRow & string)[] = ['model', 'language', 'attempts', 'ok_attempts', 'items_ok', 'simulated_attempts', 'cost_usd', 'attempts_outside_design', 'cost_outside_design_usd'];

const SIMULATED_NOTICE =
  '> **Simulated data.** These replies come from the `simulated` provider, whose judgment profiles and ' +
  'answer habits are set by design. The numbers check the pipeline; they describe no real model.';

/** Every result file of an analysis, in the order they are written: the CSV tables, summary.md, report.html. */
export function resultFiles(results: AnalysisResults, meta: ReportMeta): [name: string, content: string][] {
  return [
    ['story_scores.csv', toCsv(STORY_COLUMNS, results.storyScores)],
    ['cell_habits.csv', toCsv(HABIT_COLUMNS, results.cellHabits)],
    ['readout_comparisons.csv', toCsv(COMPARISON_COLUMNS, results.comparisons)],
    ['readout_convergence.csv', toCsv(CONVERGENCE_COLUMNS, results.convergence)],
    ['cell_summary.csv', toCsv(SUMMARY_COLUMNS, results.cellSummary)],
    ['reply_totals.csv', toCsv(TOTALS_COLUMNS, results.replyTotals)],
    ...studyCsvFiles(results),
    ['summary.md', summaryMarkdown(results, meta)],
    ['report.html', renderReportHtml(results, meta, { files: LINKED_FILES })],
  ];
}

/**
 * Writes the result files through `out` (a BlobStore key writer, a directory writer…).
 * @example await writeResults((name, text) => store.put(`campaigns/demo/results/${name}`, text), results, { campaign: 'demo' })
 */
export async function writeResults(
  out: (name: string, content: string) => Promise<void>,
  results: AnalysisResults,
  meta: ReportMeta,
): Promise<void> {
  for (const [name, content] of resultFiles(results, meta)) await out(name, content);
}

const fmt = fmtNumber;

function unique(xs: readonly string[]): string[] {
  return [...new Set(xs)].sort();
}

/** summary.md: what was run, the simulated label where it applies, convergence and habits. */
export function summaryMarkdown(results: AnalysisResults, meta: ReportMeta): string {
  const simulated = meta.simulated === true || results.simulated;
  const parts: string[] = [`# FAR-6 analysis: ${meta.campaign}${simulated ? ' (simulated)' : ''}`];
  if (simulated) parts.push(SIMULATED_NOTICE);

  const cells = unique(results.replyTotals.map((t) => `${t.model}/${t.language}`));
  const models = unique(results.replyTotals.map((t) => t.model));
  const languages = unique(results.replyTotals.map((t) => t.language));
  const readouts = unique(results.storyScores.map((s) => s.readout));
  const sum = (f: (t: ReplyTotalsRow) => number): number => results.replyTotals.reduce((acc, t) => acc + f(t), 0);
  const run = [
    meta.source ? `- Source: \`${meta.source}\`` : null,
    meta.generatedAt ? `- Generated: ${meta.generatedAt}` : null,
    `- Cells (model × language): ${cells.length} — models ${models.join(', ') || '–'}; languages ${languages.join(', ') || '–'}`,
    `- Attempts stored: ${sum((t) => t.attempts)} (${sum((t) => t.ok_attempts)} ok; ${sum((t) => t.items_ok)} items with an ok reply; ${sum((t) => t.simulated_attempts)} simulated), cost $${fmt(sum((t) => t.cost_usd), 4)}`,
    ...(sum((t) => t.attempts_outside_design ?? 0) > 0
      ? [`- Outside the design as it stands (items an edit dropped; stored, not analysed): ${sum((t) => t.attempts_outside_design ?? 0)} attempts, cost $${fmt(sum((t) => t.cost_outside_design_usd ?? 0), 4)}`]
      : []),
    `- One reply per item: the lowest ok attempt, ties by created_at; only P and notP readings are decisive.`,
    `- Item rows read (prompt item × reader): ${results.itemRows}`,
    `- Readouts with story scores: ${readouts.length ? readouts.map((r) => `\`${r}\``).join(', ') : 'none'}`,
    `- Estimation as in Same Judgment, Different Yes "Estimation steps": shares per item over decisive replies (repeats pooled), orders equally weighted, both keyings required, s and b averaged over concept pairs; profiles compared on ≥ ${results.minCommonStories} common stories.`,
  ].filter((l): l is string => l !== null);
  parts.push('## What was run', run.join('\n'), ...spendMarkdown(meta.spend));

  const repliesRead = repliesReadRows(results.cellSummary);
  if (repliesRead.length > 0) parts.push('## Replies read', mdTable([...REPLIES_READ_HEADER], repliesRead));

  const conv = results.convergence.filter((c) => c.n_cells > 0);
  parts.push(
    '## Readout convergence',
    `Story-level r between two readouts of the same cell, over cells (median and 10–90 % range); pairs with fewer than ${results.minCommonStories} common stories in every cell are left out here and listed in readout_comparisons.csv.`,
    conv.length
      ? mdTable(
          ['readout A', 'readout B', 'cells', 'median r', '10 %', '90 %', 'median mean |Δ|'],
          conv.map((c) => [c.readout_a, c.readout_b, String(c.n_cells), fmt(c.median_r), fmt(c.q10_r), fmt(c.q90_r), fmt(c.median_abs_diff)]),
        )
      : '_No readout pair had enough common stories in any cell._',
  );

  parts.push(
    '## Answer habits',
    'Keying bias b: mean over stories of (q_P − q_notP)/2 (negative: the side the question does not name, e.g. "no", is preferred). Proposition labels: second-listed preference (half the difference between choosing the second- and the first-listed proposition) and named-term pull (the same for the proposition with the named term; equal to b on labels).',
    results.cellHabits.length
      ? mdTable(
          ['model', 'language', 'readout', 'stories', 'keying bias b', 'second-listed', 'named-term pull'],
          results.cellHabits.map((h) => [h.model, h.language, h.readout, String(h.n_stories), fmt(h.keying_bias, 3), fmt(h.second_listed_pref, 3), fmt(h.named_term_pull, 3)]),
        )
      : '_No story scores: no readout had decisive support in both keyings._',
  );

  parts.push(...studySummarySections(results));

  parts.push(
    '## Files',
    [
      '- `report.html`: the charts of Same Judgment, Different Yes §4–§7 with their tables, one self-contained page (open it in any browser, offline)',
      '- `story_scores.csv`: s and b per cell, readout and story',
      '- `cell_habits.csv`: answer habits per cell and readout',
      '- `readout_comparisons.csv`: per cell and readout pair, common stories, r and mean |Δ|',
      '- `readout_convergence.csv`: per readout pair over cells',
      '- `cell_summary.csv`: replies, decisive share and P share per cell, form, constraint and reader',
      '- `reply_totals.csv`: attempts, ok replies, simulated attempts and cost per cell, over the items of the design as it stands; attempts at items an edit dropped counted apart',
      ...(results.identity || results.habits || results.agreement || results.residualConvergence || results.sameReplies || results.judgeAudit ? STUDY_FILE_LINES : []),
    ].join('\n'),
  );
  return `${parts.join('\n\n')}\n`;
}

function pad(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ').trimEnd()).join('\n');
}


/**
 * A short plain-text table for the terminal: median story-level r per readout pair, then the mean
 * keying bias b per cell (columns numbered, readouts listed below).
 */
export function formatConsoleTable(results: AnalysisResults): string {
  const lines: string[] = [];
  if (results.simulated) lines.push('SIMULATED DATA: replies from the simulated provider, not from a real model.', '');
  const conv = results.convergence.filter((c) => c.n_cells > 0);
  lines.push(`Readout convergence (Same Judgment, Different Yes Fig. 2a): story-level r between readouts, median over cells`);
  const headline = conv.filter((c) =>
    HEADLINE_PAIRS.some(
      ([a, b]) => (matches(c.readout_a, a) && matches(c.readout_b, b)) || (matches(c.readout_a, b) && matches(c.readout_b, a)),
    ),
  );
  if (headline.length === 0) {
    lines.push(`  (no headline readout pair with ≥ ${results.minCommonStories} common stories)`);
  } else {
    const rows = [['readout pair', 'cells', 'median r', '10%', '90%', 'median |Δ|']];
    for (const c of headline) {
      rows.push([`${c.readout_a} ~ ${c.readout_b}`, String(c.n_cells), fmt(c.median_r), fmt(c.q10_r), fmt(c.q90_r), fmt(c.median_abs_diff)]);
    }
    lines.push(pad(rows).replace(/^/gm, '  '));
  }
  // The file lists every pair, those without a cell of enough common stories too: say both counts.
  const all = results.convergence.length;
  lines.push(
    conv.length === all
      ? `  all ${all} readout pairs: readout_convergence.csv; per cell: readout_comparisons.csv`
      : `  ${conv.length} readout pairs compared in at least one cell, ${all - conv.length} in none; all ${all}: readout_convergence.csv; per cell: readout_comparisons.csv`,
  );

  lines.push('', 'Answer habits per cell (Same Judgment, Different Yes §6): keying bias b of the yes/no token, second-listed preference of labels');
  const byCell = new Map<string, Map<string, CellHabit>>();
  for (const h of results.cellHabits) {
    const cell = `${h.model}/${h.language}`;
    const m = byCell.get(cell) ?? new Map<string, CellHabit>();
    m.set(h.readout, h);
    byCell.set(cell, m);
  }
  if (byCell.size === 0) {
    lines.push('  (no story scores)');
    return lines.join('\n');
  }
  const rows = [['cell', 'b plain/yesno', 'b negint/yesno', '2nd-listed plain/label']];
  for (const cell of [...byCell.keys()].sort()) {
    const m = byCell.get(cell) as Map<string, CellHabit>;
    rows.push([
      cell,
      fmt(m.get('plain/yesno/rule')?.keying_bias ?? null),
      fmt(m.get('negint/yesno/rule')?.keying_bias ?? null),
      fmt(m.get('plain/label/rule')?.second_listed_pref ?? null),
    ]);
  }
  lines.push(pad(rows).replace(/^/gm, '  '));
  lines.push('  all readouts: cell_habits.csv; story scores: story_scores.csv; summary.md');
  return lines.join('\n');
}
