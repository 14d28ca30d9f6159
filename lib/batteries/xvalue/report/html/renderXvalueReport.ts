/**
 * report.html for X-Value: one self-contained page (inline CSS, inline SVG, a few lines of script
 * to sort tables, and a Content-Security-Policy that forbids every fetch).
 */
import type { ReportMeta } from '../../../../battery/types.js';
import { escapeHtml as esc } from '../../../../report/html/escape.js';
import { REPORT_CSS, REPORT_JS } from '../../../../report/html/page.js';
import type { XvalueResults } from '../../analysis/types.js';
import { checkpointSection, coverageSection, filesSection, heatmapSection, languageSection, lowestCellsSection, overallSection, step1Section } from './sections.js';

const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/**
 * The HTML report.
 * @example await writeFile('report.html', renderXvalueReport(results, { campaign: 'xvalue-demo' }, ['overall.csv']))
 */
export function renderXvalueReport(r: XvalueResults, meta: ReportMeta, files: readonly string[] = []): string {
  const simulated = meta.simulated === true || r.simulated;
  const sections = [overallSection(r), languageSection(r), heatmapSection(r), checkpointSection(r), lowestCellsSection(r), step1Section(r), coverageSection(r), filesSection(files)];
  const models = [...new Set(r.overall.map((o) => o.model))].sort();
  const facts: [string, string][] = [
    ...(meta.source ? ([['Source', meta.source]] as [string, string][]) : []),
    ...(meta.generatedAt ? ([['Generated', meta.generatedAt]] as [string, string][]) : []),
    ['Models', models.join(', ') || '–'],
    ['Languages', [...new Set(r.byLanguage.map((l) => l.language))].join(', ') || '–'],
    ['Verdicts', String(r.overall.reduce((s, o) => s + o.n, 0))],
  ];
  const header = [
    `<header><h1>${esc(`X-Value: ${meta.campaign}`)}${simulated ? ' <span class="badge">SIMULATED</span>' : ''}</h1>`,
    simulated ? '<p class="notice">These results rest on simulated judges, not on real models.</p>' : '',
    `<dl class="facts">${facts.map(([k, v]) => `<div><dt>${esc(k)}</dt><dd>${esc(v)}</dd></div>`).join('')}</dl></header>`,
  ].join('');
  const nav = `<nav aria-label="Sections"><ul>${sections.map((s) => `<li><a href="#${esc(s.id)}">${esc(s.title)}</a></li>`).join('')}</ul></nav>`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(`X-Value analysis: ${meta.campaign}${simulated ? ' (simulated)' : ''}`)}</title>`,
    `<style>${REPORT_CSS}</style>`,
    '</head>',
    '<body>',
    header,
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
