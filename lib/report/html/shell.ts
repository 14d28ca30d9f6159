/**
 * The one page every battery's report.html is drawn in: the header (study, campaign, SIMULATED
 * badge, models, design, spend against the cap), the navigation, the sections the battery
 * supplies, and the list of result files. A battery — built in or a user's own — writes sections
 * only; how a report looks, what its header says and what the page may load are decided here, so
 * the three studies' reports read as one family and a new study's report joins it for free.
 */
import { escapeHtml as esc } from './escape.js';
import { REPORT_CSS, REPORT_JS } from './page.js';
import { tableDetails } from './table.js';
import { spendText, spendWarning } from '../spend.js';
import type { ReportSpend } from '../spend.js';
import type { TableSpec } from './types.js';

/**
 * What the page says of where its numbers come from. Defined here, below the battery layer, and
 * re-exported by the battery contract (lib/battery/types.ts), so both name one type.
 */
export interface ReportMeta {
  readonly campaign: string;
  readonly simulated?: boolean;
  /** `<data folder>/campaigns/<c>/`, an S3 prefix, a replies file; never an absolute local path. */
  readonly source?: string;
  readonly generatedAt?: string;
  /** The cost of every stored reply against the campaign's cap; absent where no cap applies. */
  readonly spend?: ReportSpend;
}

/** Nothing may be loaded: styles and the sorting script are inline, charts are inline SVG. */
export const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** One section of a report: what the navigation links to and the page shows under an h2. */
export interface ReportSection {
  /** Its fragment (`#id`): letters, digits and `-`. */
  readonly id: string;
  /** Its heading; begins with the title of the summary.md section it shows, where it has one. */
  readonly title: string;
  /** Where it comes from in the paper, shown beside the title: `Same Judgment, Different Yes §4, Figure 2a`. */
  readonly cite?: string;
  /** Its HTML: paragraphs, figures (`reportFigure`), tables (`htmlTable` with their `csv`). */
  readonly body: readonly string[];
  /** Titles of summary.md sections whose numbers this section shows besides its own. */
  readonly alsoIn?: readonly string[];
}

/** What a battery says about its report; the shell draws the rest. */
export interface ReportContent {
  /** The study, first in the page title and the h1: `FAR-6`, `X-Value`, `P(True)`. */
  readonly study: string;
  /** The paper the battery implements, by title: the page says "After <paper>". */
  readonly paper?: string;
  /** Whether the results say their replies were simulated (the badge shows when this or `meta.simulated` is true). */
  readonly simulated: boolean;
  /** What simulated means for this study, under the badge; a general sentence by default. */
  readonly simulatedNote?: string;
  /** Warnings the reader must see before any number (plain text). */
  readonly notices?: readonly string[];
  /** The models whose replies were analysed. */
  readonly models: readonly string[];
  /** The design, as label and value: languages, benchmarks, cells, replies… */
  readonly design: readonly (readonly [label: string, value: string])[];
  /** A table under the header's facts (e.g. replies per cell), folded; its `csv` is linked. */
  readonly runTable?: TableSpec;
  readonly sections: readonly ReportSection[];
  /** The result files beside report.html, linked at the end of the page. */
  readonly files: readonly string[];
}

const DEFAULT_SIMULATED_NOTE = 'Every reply comes from the simulated provider: the numbers check the pipeline; they describe no real model.';

/**
 * A section's HTML, as the shell places it; `renderReportPage` calls it for each section.
 * @example reportSectionHtml({ id: 'overview', title: 'Overview', cite: 'Table 2', body: ['<p>…</p>'] })
 */
export function reportSectionHtml(s: ReportSection): string {
  const summary = s.alsoIn && s.alsoIn.length > 0 ? ` data-summary="${esc(s.alsoIn.join('|'))}"` : '';
  const cite = s.cite ? ` <span class="cite">${esc(s.cite)}</span>` : '';
  return `<section id="${esc(s.id)}"${summary} aria-labelledby="${esc(s.id)}-h"><h2 id="${esc(s.id)}-h">${esc(s.title)}${cite}</h2>${s.body.join('')}</section>`;
}

/**
 * A chart in a figure: the caption says what it shows and, in `cite`, where in the paper it comes
 * from; the table of its numbers (with its CSV link) is folded under it.
 * @example reportFigure(rowChart(spec), 'Median r per readout pair', { cite: 'Same Judgment, Different Yes §4, Figure 2a', table })
 */
export function reportFigure(svg: string, caption: string, opts: { readonly cite?: string; readonly table?: TableSpec; readonly className?: string } = {}): string {
  const cite = opts.cite ? ` <span class="cite">(${esc(opts.cite)})</span>` : '';
  const cls = opts.className ? ` class="${esc(opts.className)}"` : '';
  return `<figure>${svg}<figcaption${cls}>${esc(caption)}${cite}</figcaption>${opts.table ? tableDetails(opts.table) : ''}</figure>`;
}

function facts(rows: readonly (readonly [string, string])[]): string {
  return `<dl class="facts">${rows.map(([k, v]) => `<div><dt>${esc(k)}</dt><dd>${esc(v)}</dd></div>`).join('')}</dl>`;
}

function filesSection(files: readonly string[]): ReportSection {
  const list = files.length
    ? `<ul class="files">${files.map((f) => `<li><a href="${esc(encodeURI(f))}">${esc(f)}</a></li>`).join('')}</ul>`
    : '<p class="empty">No result files were listed.</p>';
  return { id: 'files', title: 'Files: every number as CSV', body: ['<p>The result files sit beside this report; every table above names the CSV that holds its numbers.</p>', list] };
}

/**
 * A whole report.html: one self-contained page (inline CSS, inline SVG, a few lines of script to
 * sort tables, a Content-Security-Policy that forbids every fetch), so it opens offline, can be
 * sent by e-mail and never calls out.
 * @example await writeFile('report.html', renderReportPage({ study: 'Likert', simulated: false, models, design: [], sections, files: ['scores.csv'] }, { campaign: 'demo' }))
 */
export function renderReportPage(content: ReportContent, meta: ReportMeta): string {
  const simulated = meta.simulated === true || content.simulated;
  const sections = [...content.sections, filesSection(content.files)];
  const spend = spendText(meta.spend);
  const spendAlarm = spendWarning(meta.spend);
  const header = [
    `<header><h1>${esc(`${content.study}: ${meta.campaign}`)}${simulated ? ' <span class="badge">SIMULATED</span>' : ''}</h1>`,
    simulated ? `<p class="notice" role="note"><strong>Simulated data.</strong> ${esc(content.simulatedNote ?? DEFAULT_SIMULATED_NOTE)}</p>` : '',
    spendAlarm ? `<p class="notice" role="note"><strong>${esc(spendAlarm)}.</strong> See docs/budget.md, “A provider that reports more than was reserved”.</p>` : '',
    ...(content.notices ?? []).map((n) => `<p class="notice" role="note">${esc(n)}</p>`),
    content.paper ? `<p>After <cite>${esc(content.paper)}</cite>.</p>` : '',
    '<h2 id="run">What was run</h2>',
    facts([
      ['Campaign', meta.campaign],
      ...(meta.source ? ([['Source', meta.source]] as const) : []),
      ...(meta.generatedAt ? ([['Generated', meta.generatedAt]] as const) : []),
      ['Models', content.models.join(', ') || '–'],
      ...content.design,
      ...(spend ? ([['Spend', spend]] as const) : []),
    ]),
    content.runTable ? tableDetails(content.runTable) : '',
    '</header>',
  ].join('');
  const nav = `<nav aria-label="Sections"><ul>${sections.map((s) => `<li><a href="#${esc(s.id)}">${esc(s.title)}</a></li>`).join('')}</ul></nav>`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(REPORT_CSP)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(`${content.study}: ${meta.campaign}${simulated ? ' (simulated)' : ''}`)}</title>`,
    `<style>${REPORT_CSS}</style>`,
    '</head>',
    '<body>',
    header,
    nav,
    '<main>',
    ...sections.map(reportSectionHtml),
    '</main>',
    `<script>${REPORT_JS}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
