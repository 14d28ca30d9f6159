/**
 * What every FAR-6 report section is built from: the section record that cites Same Judgment,
 * Different Yes beside its title, and the small HTML pieces the sections share (a paragraph, an
 * "empty" note, a figure with its table, percentages, cell names, the values a row chart spans).
 */
import { escapeHtml as esc, reportFigure } from '../../../../api/battery.js';
import type { ChartRow, ReportSection, TableSpec } from '../../../../api/battery.js';

export type Section = ReportSection;

/** The paper the sections cite. */
export const FAR6_PAPER = 'Same Judgment, Different Yes';

/** Where each section's view comes from in the paper, cited beside its title. */
const CITES: Readonly<Record<string, string>> = {
  convergence: '§4, Figure 2a',
  disagreement: '§4, Figure 2b',
  heatmaps: '§5, Figure 3c–f',
  identity: '§5, Table 6, Figure 3a/3b',
  habits: '§6, Figure 4',
  polarity: '§7, Figure 5',
  'judge-audit': '"Sentence judging", Table 7',
};

/** `alsoIn`: the titles of summary.md sections whose numbers this section shows besides its own. */
export function section(id: string, title: string, parts: readonly string[], alsoIn: readonly string[] = []): Section {
  const where = CITES[id];
  return { id, title, body: parts, ...(alsoIn.length > 0 ? { alsoIn } : {}), ...(where ? { cite: `${FAR6_PAPER} ${where}` } : {}) };
}

/**
 * A section opened by the paragraph that says how to read it: `none` puts beneath it the note of
 * why nothing follows, `of` what does.
 */
export function introducedSection(id: string, title: string, intro: string): { none(why: string): Section; of(parts: readonly string[]): Section } {
  const opening = p(intro);
  return {
    none: (why) => section(id, title, [opening, empty(why)]),
    of: (parts) => section(id, title, [opening, ...parts]),
  };
}

/** A paragraph of escaped text. */
export function p(text: string): string {
  return `<p>${esc(text)}</p>`;
}

/** The note a section shows instead of a chart it has no data for. */
export function empty(text: string): string {
  return `<p class="empty">${esc(text)}</p>`;
}

/** A chart with its caption and, folded beneath, the table of its numbers. */
export function figure(svg: string, caption: string, table?: TableSpec): string {
  return reportFigure(svg, caption, table ? { table } : {});
}

/** The distinct values, sorted: the order of chart rows and matrix labels. */
export function uniqueSorted(xs: Iterable<string>): string[] {
  return [...new Set(xs)].sort();
}

/** A share as a percentage; `–` where there is none. */
export function pct(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '–' : `${(x * 100).toFixed(digits)} %`;
}

/** A cell (model × language) as the report names it: `model/language`. */
export const cellName = (model: string, language: string): string => `${model}/${language}`;

/** Every value a row chart draws (its marks and the ends of its ranges), for its domain. */
export function chartValues(rows: readonly ChartRow[]): number[] {
  return rows.flatMap((r) => [...(r.marks ?? []).map((m) => m.x), ...(r.ranges ?? []).flatMap((g) => [g.lo, g.hi])]);
}

/** The disagreement and polarity sections both rest on the agreement analysis (the same replies read twice). */
export const NO_AGREEMENT = 'Not computed: the data hold no replies read by two readers.';

/** The heat-map and identity sections both rest on the identity analysis (profiles across cells). */
export const NO_IDENTITY = 'Not computed: no identity analysis in these results.';
export const NO_IDENTITY_READOUT = 'No identity readout (plain/label/rule, plain/free/judge:*) has story scores.';
