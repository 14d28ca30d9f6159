/**
 * The report's header facts: models, languages and reply totals (the "What was run" of summary.md),
 * which the shared report shell draws above the sections.
 */
import { fmtNumber as fmt } from '../../../../api/battery.js';
import type { TableSpec } from '../../../../api/battery.js';
import type { AnalysisResults, ReplyTotalsRow } from '../../analysis/types.js';
import { cellName, uniqueSorted } from './section.js';

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
