/**
 * report.html for X-Value: its sections (Towards Cross-lingual Values Judgment §6) in the shared
 * report shell, which draws the header, the navigation and the list of result files.
 */
import { renderReportPage } from '../../../../api/battery.js';
import type { ReportMeta } from '../../../../api/battery.js';
import type { XvalueResults } from '../../analysis/types.js';
import { checkpointSection, coverageSection, heatmapSection, languageSection, lowestCellsSection, overallSection, step1Section, XVALUE_PAPER } from './sections.js';

/**
 * The HTML report.
 * @example await writeFile('report.html', renderXvalueReport(results, { campaign: 'xvalue-demo' }, ['overall.csv']))
 */
export function renderXvalueReport(r: XvalueResults, meta: ReportMeta, files: readonly string[] = []): string {
  return renderReportPage(
    {
      study: 'X-Value',
      paper: XVALUE_PAPER,
      simulated: r.simulated,
      simulatedNote: 'These results rest on simulated judges, not on real models.',
      models: [...new Set(r.overall.map((o) => o.model))].sort(),
      design: [
        ['Languages', [...new Set(r.byLanguage.map((l) => l.language))].join(', ') || '–'],
        ['Verdicts', String(r.overall.reduce((s, o) => s + o.n, 0))],
      ],
      sections: [overallSection(r), languageSection(r), heatmapSection(r), checkpointSection(r), lowestCellsSection(r), step1Section(r), coverageSection(r)],
      files,
    },
    meta,
  );
}
