import type { ReportMeta } from '../../../api/battery.js';
import type { XvalueResults } from '../analysis/types.js';
import { csvTables } from './csvTables.js';
import { renderXvalueReport } from './html/renderXvalueReport.js';
import { xvalueSummaryMarkdown } from './markdownSummary.js';

/**
 * Every result file of an X-Value analysis (BatteryAnalysis.files): the CSV tables, summary.md
 * and report.html, which links to the others.
 * @example for (const [name, text] of xvalueResultFiles(results, { campaign })) await writeFile(join(dir, name), text)
 */
export function xvalueResultFiles(r: XvalueResults, meta: ReportMeta): [string, string][] {
  const csv = csvTables(r);
  const names = [...csv.map(([n]) => n), 'summary.md'];
  return [...csv, ['summary.md', xvalueSummaryMarkdown(r, meta)], ['report.html', renderXvalueReport(r, meta, names)]];
}

/** A short table for the terminal: Acc, Acc0, Acc1 and F1 per model and strategy. */
export function xvalueConsoleTable(r: XvalueResults): string {
  const f = (x: number | null) => (x === null ? '   –  ' : `${(x * 100).toFixed(1).padStart(5)}%`);
  const lines = [`${'model'.padEnd(16)} ${'strategy'.padEnd(8)}    Acc   Acc0   Acc1     F1${r.simulated ? '   (SIMULATED)' : ''}`];
  for (const o of r.overall) lines.push(`${o.model.padEnd(16)} ${o.strategy.padEnd(8)} ${f(o.accuracy)} ${f(o.accuracy_negative)} ${f(o.accuracy_positive)} ${f(o.f1)}`);
  return lines.join('\n');
}
