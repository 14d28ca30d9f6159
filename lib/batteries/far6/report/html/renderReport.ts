/**
 * report.html: the views of Same Judgment, Different Yes §4–§7 as sections of the shared report
 * shell, which draws the header, the navigation and the list of result files in one
 * self-contained page (inline CSS and SVG, a Content-Security-Policy that forbids every fetch).
 */
import type { AnalysisResults } from '../../analysis/types.js';
import { renderReportPage } from '../../../../api/battery.js';
import type { HtmlReportOptions, ReportMeta as CoreReportMeta } from '../../../../api/battery.js';
import { judgeAuditSection } from './judgeAuditSection.js';
import {
  convergenceSection,
  disagreementSection,
  FAR6_PAPER,
  repliesReadSection,
  heatmapSection,
  habitsSection,
  identitySection,
  polaritySection,
  runFacts,
} from './sections.js';
import type { Section } from './sections.js';

const SIMULATED_NOTE = 'These replies come from the simulated provider, whose judgment profiles and answer habits are set by design. The numbers check the pipeline; they describe no real model.';

/**
 * Renders the analysis results as one HTML document.
 * @example await writeFile('report.html', renderReportHtml(results, { campaign: 'demo' }, { files: ['story_scores.csv'] }))
 */
export function renderReportHtml(results: AnalysisResults, meta: CoreReportMeta, opts: HtmlReportOptions = {}): string {
  const sections: Section[] = [
    repliesReadSection(results),
    convergenceSection(results, opts),
    disagreementSection(results),
    heatmapSection(results),
    identitySection(results),
    habitsSection(results),
    polaritySection(results),
    // Same Judgment, Different Yes "Sentence judging": only campaigns with an audit block have one.
    ...(results.judgeAudit ? [judgeAuditSection(results.judgeAudit)] : []),
  ];
  return renderReportPage({ study: 'FAR-6 analysis', paper: FAR6_PAPER, simulated: results.simulated, simulatedNote: SIMULATED_NOTE, ...runFacts(results), sections, files: opts.files ?? [] }, meta);
}
