/**
 * report.html: one self-contained page with the views of Same Judgment, Different Yes §4–§7 — inline CSS,
 * inline SVG drawn here, a few lines of script to sort tables, and a Content-Security-Policy that
 * forbids every fetch, so the page opens offline and can never call out.
 */
import type { AnalysisResults, ReportMeta } from '../../analysis/types.js';
import { escapeHtml as esc } from '../../../../report/html/escape.js';
import { judgeAuditSection } from './judgeAuditSection.js';
import { REPORT_CSS, REPORT_JS } from '../../../../report/html/page.js';
import {
  convergenceSection,
  disagreementSection,
  filesSection,
  headerSection,
  repliesReadSection,
  heatmapSection,
  habitsSection,
  identitySection,
  polaritySection,
} from './sections.js';
import type { Section } from './sections.js';
import type { HtmlReportOptions } from '../../../../report/html/types.js';

/** Nothing may be loaded: styles and the sorting script are inline, charts are inline SVG. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/**
 * Renders the analysis results as one HTML document.
 * @example await writeFile('report.html', renderReportHtml(results, { campaign: 'demo' }, { files: ['story_scores.csv'] }))
 */
export function renderReportHtml(results: AnalysisResults, meta: ReportMeta, opts: HtmlReportOptions = {}): string {
  const simulated = meta.simulated === true || results.simulated;
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
    filesSection(opts.files ?? []),
  ];
  const nav = `<nav aria-label="Sections"><ul>${sections.map((s) => `<li><a href="#${esc(s.id)}">${esc(s.title)}</a></li>`).join('')}</ul></nav>`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(`FAR-6 analysis: ${meta.campaign}${simulated ? ' (simulated)' : ''}`)}</title>`,
    `<style>${REPORT_CSS}</style>`,
    '</head>',
    '<body>',
    headerSection(results, meta, simulated),
    nav,
    '<main>',
    ...sections.map((s) => s.html),
    '</main>',
    `<script>${REPORT_JS}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
