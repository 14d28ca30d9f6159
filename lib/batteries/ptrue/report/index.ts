import type { ReportMeta } from '../../../api/battery.js';
import type { PtrueResults } from '../analysis/analyzeRows.js';
import { renderPtrueReport } from './html.js';
import { summaryMarkdown } from './markdown.js';
import { csvFiles } from './tables.js';

export { csvFiles } from './tables.js';
export { summaryMarkdown, consoleSummary } from './markdown.js';
export { renderPtrueReport, ptrueSections, reliabilityChart } from './html.js';

/** Every result file: the CSV tables, summary.md and report.html. */
export function ptrueFiles(r: PtrueResults, meta: ReportMeta): [string, string][] {
  return [...csvFiles(r), ['summary.md', summaryMarkdown(r, meta)], ['report.html', renderPtrueReport(r, meta)]];
}
