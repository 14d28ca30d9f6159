/**
 * Inline SVG charts, drawn in TypeScript so that report.html needs no script library, font or
 * image: row charts (points, intervals, bars), colour matrices, a scatter plot and stacked share
 * bars. Every chart carries a <title> and <desc> (role="img"), every mark a <title> tooltip, a
 * legend; the numbers also sit in a table beside each chart, and in a CSV file.
 *
 * Why not a declarative library (Vega-Lite rendered to static SVG at report time): the five chart
 * kinds here cover the three papers' figures in about 400 lines with no dependency; report.html
 * must open offline under a Content-Security-Policy that loads nothing, which rules out a runtime
 * library and leaves Vega-Lite only as a build-time renderer (vega, vega-lite and their
 * dependencies in every install and in every Lambda bundle, for output these functions already
 * produce); and the browser tests inspect the marks by class. What Vega-Lite would give —
 * restyling a figure from its spec and data in a notebook — the CSV beside every table already
 * gives to Altair or pandas users. The choice is revisited when a battery needs a chart kind these
 * five cannot draw; until then a new chart kind is a new function here, shared by every battery.
 */
import { escapeHtml as esc } from './escape.js';
import type { ChartRow, MatrixSpec, RowChartSpec, ScatterSpec, StackedSpec } from './types.js';

/** Series colours (colour-blind safe, after Okabe & Ito). */
export const PALETTE = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#000000', '#f0e442'] as const;

const FONT_PX_PER_CHAR = 6.4;
const ROW_H = 18;

/** Coordinates with one decimal: shorter markup, no visible loss. */
function n(x: number): string {
  return String(Math.round(x * 10) / 10);
}

function colour(series: number): string {
  return PALETTE[series % PALETTE.length] as string;
}

function textWidth(text: string): number {
  return text.length * FONT_PX_PER_CHAR;
}

function open(id: string, width: number, height: number, title: string, desc: string): string {
  return (
    `<svg id="${esc(id)}" class="chart" viewBox="0 0 ${n(width)} ${n(height)}" width="${n(width)}" height="${n(height)}" role="img" aria-labelledby="${esc(id)}-t ${esc(id)}-d">` +
    `<title id="${esc(id)}-t">${esc(title)}</title><desc id="${esc(id)}-d">${esc(desc)}</desc>`
  );
}

/** Evenly spaced round ticks covering `[lo, hi]` (at most about eight). */
export function niceTicks(lo: number, hi: number): number[] {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / 6;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= 8) ?? 10 * mag);
  const out: number[] = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

/**
 * A domain that holds every value and `include` (e.g. 0 for bars), widened a little; `clamp`
 * bounds it (e.g. [-1, 1] for r).
 */
export function domainOf(values: readonly (number | null | undefined)[], include: readonly number[] = [], clamp?: readonly [number, number]): [number, number] {
  const xs = [...values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)), ...include];
  if (xs.length === 0) return clamp ? [clamp[0], clamp[1]] : [0, 1];
  let lo = Math.min(...xs);
  let hi = Math.max(...xs);
  const pad = (hi - lo || Math.abs(hi) || 1) * 0.05;
  lo -= pad;
  hi += pad;
  if (clamp) {
    lo = Math.max(lo, clamp[0]);
    hi = Math.min(hi, clamp[1]);
  }
  return [lo, hi];
}

function tickLabel(t: number, format?: (x: number) => string): string {
  if (format) return format(t);
  return String(Math.round(t * 1000) / 1000);
}

function markShape(shape: string, x: number, y: number, fill: string, title: string): string {
  const t = `<title>${esc(title)}</title>`;
  switch (shape) {
    case 'ring':
      return `<circle cx="${n(x)}" cy="${n(y)}" r="4" fill="#fff" stroke="${fill}" stroke-width="1.6">${t}</circle>`;
    case 'tick':
      return `<line x1="${n(x)}" x2="${n(x)}" y1="${n(y - 5)}" y2="${n(y + 5)}" stroke="${fill}" stroke-width="1.4" opacity="0.75">${t}</line>`;
    case 'diamond':
      return `<path d="M${n(x)} ${n(y - 5)}L${n(x + 5)} ${n(y)}L${n(x)} ${n(y + 5)}L${n(x - 5)} ${n(y)}Z" fill="#fff" stroke="${fill}" stroke-width="1.6">${t}</path>`;
    case 'square':
      return `<rect x="${n(x - 3.5)}" y="${n(y - 3.5)}" width="7" height="7" fill="${fill}">${t}</rect>`;
    default:
      return `<circle cx="${n(x)}" cy="${n(y)}" r="4" fill="${fill}">${t}</circle>`;
  }
}

/**
 * Rows of marks on one horizontal axis: points, intervals (whiskers) and bars per row, grouped
 * under headings, with a legend for the series and reference lines (e.g. r = 0.9).
 */
export function rowChart(spec: RowChartSpec): string {
  const [lo, hi] = spec.domain;
  const labelW = Math.min(640, Math.max(60, Math.max(0, ...spec.rows.map((r) => textWidth(r.label)), ...spec.rows.map((r) => textWidth(r.group ?? '') - 20)) + 14));
  const plotW = spec.plotWidth ?? 440;
  const legendH = spec.series.length > 0 ? 22 : 4;
  const scale = (x: number): number => labelW + ((Math.min(hi, Math.max(lo, x)) - lo) / (hi - lo || 1)) * plotW;
  const body: string[] = [];
  let y = legendH + 4;
  let group: string | undefined;
  for (const row of spec.rows) {
    if (row.group !== undefined && row.group !== group) {
      group = row.group;
      body.push(`<text class="group" x="4" y="${n(y + 13)}">${esc(group)}</text>`);
      y += ROW_H;
    }
    body.push(chartRow(row, y, labelW, plotW, scale));
    y += ROW_H;
  }
  const plotTop = legendH + 4;
  const axisY = y + 4;
  const ticks = niceTicks(lo, hi);
  const axis: string[] = [`<line class="axis" x1="${n(labelW)}" x2="${n(labelW + plotW)}" y1="${n(axisY)}" y2="${n(axisY)}"/>`];
  for (const t of ticks) {
    const x = scale(t);
    axis.push(`<line class="grid" x1="${n(x)}" x2="${n(x)}" y1="${n(plotTop)}" y2="${n(axisY)}"/>`);
    axis.push(`<text class="tick" x="${n(x)}" y="${n(axisY + 13)}" text-anchor="middle">${esc(tickLabel(t, spec.format))}</text>`);
  }
  for (const ref of spec.references ?? []) {
    if (ref.x < lo || ref.x > hi) continue;
    const x = scale(ref.x);
    axis.push(`<line class="ref" x1="${n(x)}" x2="${n(x)}" y1="${n(plotTop)}" y2="${n(axisY)}"><title>${esc(ref.label)}</title></line>`);
  }
  axis.push(`<text class="axis-label" x="${n(labelW + plotW / 2)}" y="${n(axisY + 28)}" text-anchor="middle">${esc(spec.axisLabel)}</text>`);
  const legend = legendRow(spec.series, labelW);
  const width = Math.max(labelW + plotW + 24, labelW + legendWidth(spec.series) + 8);
  const height = axisY + 36;
  // Grid first, marks on top.
  return `${open(spec.id, width, height, spec.title, spec.desc)}${legend}${axis.join('')}${body.join('')}</svg>`;
}

function legendWidth(series: RowChartSpec['series']): number {
  return series.reduce((w, s) => w + 24 + textWidth(s.label), 0);
}

function legendRow(series: RowChartSpec['series'], x0: number): string {
  const out: string[] = [];
  let x = x0;
  series.forEach((s, i) => {
    out.push(markShape(s.shape, x + 5, 11, colour(s.colour ?? i), s.label));
    out.push(`<text class="legend" x="${n(x + 14)}" y="${n(15)}">${esc(s.label)}</text>`);
    x += 24 + textWidth(s.label);
  });
  return out.join('');
}

function chartRow(row: ChartRow, y: number, labelW: number, plotW: number, scale: (x: number) => number): string {
  const mid = y + ROW_H / 2;
  const out: string[] = [];
  if (row.emphasis) out.push(`<rect class="warn-band" x="0" y="${n(y)}" width="${n(labelW + plotW + 8)}" height="${ROW_H}"/>`);
  out.push(`<text class="row-label${row.emphasis ? ' warn' : ''}" x="${n(labelW - 8)}" y="${n(mid + 4)}" text-anchor="end">${esc(row.label)}</text>`);
  for (const b of row.bars ?? []) {
    const x0 = scale(b.from ?? 0);
    const x1 = scale(b.x);
    out.push(`<rect class="bar" x="${n(Math.min(x0, x1))}" y="${n(mid - 5)}" width="${n(Math.abs(x1 - x0))}" height="10" fill="${colour(b.series)}" opacity="0.55"><title>${esc(b.title)}</title></rect>`);
  }
  for (const r of row.ranges ?? []) {
    const x0 = scale(r.lo);
    const x1 = scale(r.hi);
    const c = colour(r.series);
    const title = r.title ? `<title>${esc(r.title)}</title>` : '';
    out.push(`<g class="range" stroke="${c}" stroke-width="1.6">${title}<line x1="${n(x0)}" x2="${n(x1)}" y1="${n(mid)}" y2="${n(mid)}"/><line x1="${n(x0)}" x2="${n(x0)}" y1="${n(mid - 3)}" y2="${n(mid + 3)}"/><line x1="${n(x1)}" x2="${n(x1)}" y1="${n(mid - 3)}" y2="${n(mid + 3)}"/></g>`);
  }
  for (const m of row.marks ?? []) out.push(markShape(m.shape, scale(m.x), mid, colour(m.series), m.title));
  return `<g class="row">${out.join('')}</g>`;
}

/* ---- colour scales ---- */

const NEG: readonly [number, number, number] = [178, 24, 43];
const MID: readonly [number, number, number] = [247, 247, 247];
const POS: readonly [number, number, number] = [33, 102, 172];

function mix(a: readonly number[], b: readonly number[], t: number): string {
  const c = a.map((x, i) => Math.round(x + ((b[i] as number) - x) * t));
  return `rgb(${c.join(',')})`;
}

/** Red below the midpoint, white at it, blue above; `t` in [-1, 1]. */
export function divergingColour(t: number): string {
  const u = Math.max(-1, Math.min(1, t));
  return u < 0 ? mix(MID, NEG, -u) : mix(MID, POS, u);
}

const NEUTRAL_LO: readonly [number, number, number] = [118, 42, 131];
const NEUTRAL_HI: readonly [number, number, number] = [27, 120, 55];

/** Purple below the midpoint, white at it, green above; `t` in [-1, 1]: for scales with no better end. */
export function neutralColour(t: number): string {
  const u = Math.max(-1, Math.min(1, t));
  return u < 0 ? mix(MID, NEUTRAL_LO, -u) : mix(MID, NEUTRAL_HI, u);
}

/**
 * The colour of a value on a matrix scale (r in [-1, 1], or a share in [0, 1] around 0.5): blue
 * at the better end and red at the worse, whichever end that is; green to purple when neither is.
 * @example scaleColour(0.05, 'share', 'low') // a blue: a low ECE is good
 */
export function scaleColour(value: number, scale: MatrixSpec['scale'], better: MatrixSpec['better'] = 'high'): string {
  const t = scale === 'share' ? value * 2 - 1 : value;
  if (better === 'neither') return neutralColour(t);
  return divergingColour(better === 'low' ? -t : t);
}

/** The legend's words for the ends of a scale: which is better, or none. */
function endWords(better: MatrixSpec['better']): { readonly hi: string; readonly lo: string } {
  if (better === 'high') return { hi: ' better', lo: ' worse' };
  if (better === 'low') return { hi: ' worse', lo: ' better' };
  return { hi: '', lo: '' };
}

/**
 * A colour matrix: one `rect.hm-cell` per row × column (diagonal and empty cells included, so
 * an n-cell square matrix has n × n of them), white lines between groups, a colour legend.
 */
export function matrixChart(spec: MatrixSpec): string {
  const nr = spec.rowLabels.length;
  const nc = spec.colLabels.length;
  const size = Math.max(5, Math.min(22, Math.floor(600 / Math.max(nr, nc, 1))));
  const fontPx = Math.min(11, Math.max(6, size - 2));
  const charW = (fontPx / 11) * 7;
  const left = Math.max(0, ...spec.rowLabels.map((l) => l.length * charW)) + 10;
  const top = Math.max(0, ...spec.colLabels.map((l) => l.length * charW)) + 10;
  const out: string[] = [];
  for (let i = 0; i < nr; i++) {
    const y = top + i * size;
    out.push(`<text class="m-label" x="${n(left - 4)}" y="${n(y + size / 2 + fontPx / 3)}" text-anchor="end" font-size="${fontPx}">${esc(spec.rowLabels[i] as string)}</text>`);
    for (let j = 0; j < nc; j++) {
      const c = spec.cell(i, j);
      const cls = c.diagonal ? 'hm-cell hm-diag' : c.value === null ? 'hm-cell hm-empty' : 'hm-cell';
      const fill = c.diagonal ? '#555' : c.value === null ? '#ddd' : scaleColour(c.value, spec.scale, spec.better);
      const dataV = c.value === null ? '' : ` data-v="${c.value}"`;
      out.push(`<rect class="${cls}" x="${n(left + j * size)}" y="${n(y)}" width="${size}" height="${size}" fill="${fill}"${dataV}><title>${esc(c.title)}</title></rect>`);
    }
  }
  for (let j = 0; j < nc; j++) {
    const x = left + j * size + size / 2 + fontPx / 3;
    out.push(`<text class="m-label" transform="translate(${n(x)} ${n(top - 4)}) rotate(-90)" font-size="${fontPx}">${esc(spec.colLabels[j] as string)}</text>`);
  }
  const sep = (groups: readonly string[] | undefined, horizontal: boolean): void => {
    if (!groups) return;
    for (let k = 1; k < groups.length; k++) {
      if (groups[k] === groups[k - 1]) continue;
      out.push(
        horizontal
          ? `<line class="m-sep" x1="${n(left)}" x2="${n(left + nc * size)}" y1="${n(top + k * size)}" y2="${n(top + k * size)}"/>`
          : `<line class="m-sep" x1="${n(left + k * size)}" x2="${n(left + k * size)}" y1="${n(top)}" y2="${n(top + nr * size)}"/>`,
      );
    }
  };
  sep(spec.rowGroups, true);
  sep(spec.colGroups, false);
  const legendX = left + nc * size + 18;
  const legendH = Math.max(120, Math.min(220, nr * size));
  const [lo, hi] = spec.scale === 'share' ? [0, 1] : [-1, 1];
  const stops = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => `<stop offset="${f}" stop-color="${scaleColour(hi - f * (hi - lo), spec.scale, spec.better)}"/>`)
    .join('');
  const words = endWords(spec.better);
  out.push(`<g class="legend" data-better="${spec.better}">`);
  out.push(`<defs><linearGradient id="${esc(spec.id)}-g" x1="0" x2="0" y1="0" y2="1">${stops}</linearGradient></defs>`);
  out.push(`<rect x="${n(legendX)}" y="${n(top)}" width="12" height="${n(legendH)}" fill="url(#${esc(spec.id)}-g)" stroke="#999" stroke-width="0.5"/>`);
  for (const [v, f, word] of [[hi, 0, words.hi], [(hi + lo) / 2, 0.5, ''], [lo, 1, words.lo]] as const) {
    out.push(`<text class="tick" x="${n(legendX + 16)}" y="${n(top + f * legendH + 4)}">${esc(`${v}${word}`)}</text>`);
  }
  out.push(`<text class="axis-label" transform="translate(${n(legendX + 64)} ${n(top)}) rotate(90)">${esc(spec.legendLabel)}</text>`);
  out.push('</g>');
  const width = legendX + 84;
  const height = Math.max(top + nr * size, top + legendH) + 12;
  return `${open(spec.id, width, height, spec.title, spec.desc)}${out.join('')}</svg>`;
}

/** A scatter plot with both axes on one domain, zero lines, and the opposite-sign quadrants shaded. */
export function scatterChart(spec: ScatterSpec): string {
  const [lo, hi] = spec.domain;
  const side = 300;
  const left = 56;
  const top = 30;
  const sx = (x: number): number => left + ((x - lo) / (hi - lo || 1)) * side;
  const sy = (y: number): number => top + side - ((y - lo) / (hi - lo || 1)) * side;
  const out: string[] = [];
  const z = Math.max(lo, Math.min(hi, 0));
  out.push(`<rect class="quadrant" x="${n(sx(z))}" y="${n(sy(z))}" width="${n(sx(hi) - sx(z))}" height="${n(sy(lo) - sy(z))}"/>`);
  out.push(`<rect class="quadrant" x="${n(sx(lo))}" y="${n(sy(hi))}" width="${n(sx(z) - sx(lo))}" height="${n(sy(z) - sy(hi))}"/>`);
  out.push(`<rect class="frame" x="${left}" y="${top}" width="${side}" height="${side}"/>`);
  for (const t of niceTicks(lo, hi)) {
    out.push(`<text class="tick" x="${n(sx(t))}" y="${n(top + side + 14)}" text-anchor="middle">${esc(tickLabel(t))}</text>`);
    out.push(`<text class="tick" x="${n(left - 6)}" y="${n(sy(t) + 4)}" text-anchor="end">${esc(tickLabel(t))}</text>`);
  }
  if (lo < 0 && hi > 0) {
    out.push(`<line class="ref0" x1="${n(sx(0))}" x2="${n(sx(0))}" y1="${top}" y2="${top + side}"/>`);
    out.push(`<line class="ref0" x1="${left}" x2="${left + side}" y1="${n(sy(0))}" y2="${n(sy(0))}"/>`);
  }
  for (const p of spec.points) {
    const cls = p.highlight ? 'pt pt-hi' : 'pt';
    out.push(`<circle class="${cls}" cx="${n(sx(Math.max(lo, Math.min(hi, p.x))))}" cy="${n(sy(Math.max(lo, Math.min(hi, p.y))))}" r="4"><title>${esc(p.title)}</title></circle>`);
  }
  out.push(`<text class="axis-label" x="${n(left + side / 2)}" y="${n(top + side + 32)}" text-anchor="middle">${esc(spec.xLabel)}</text>`);
  out.push(`<text class="axis-label" transform="translate(14 ${n(top + side / 2)}) rotate(-90)" text-anchor="middle">${esc(spec.yLabel)}</text>`);
  // The legend: what a dot, a red dot and the shading stand for.
  const legend = spec.legend ?? { point: 'point', highlight: 'highlighted', quadrants: 'opposite signs' };
  const items = [
    `<circle cx="${left + 5}" cy="12" r="4" fill="#0072b2" opacity="0.8"/><text class="legend" x="${left + 13}" y="16">${esc(legend.point)}</text>`,
    `<circle cx="${left + 25 + textWidth(legend.point)}" cy="12" r="4" fill="#b2182b"/><text class="legend" x="${left + 33 + textWidth(legend.point)}" y="16">${esc(legend.highlight)}</text>`,
    `<rect class="quadrant" x="${left + 45 + textWidth(legend.point) + textWidth(legend.highlight)}" y="6" width="12" height="12"/><text class="legend" x="${left + 61 + textWidth(legend.point) + textWidth(legend.highlight)}" y="16">${esc(legend.quadrants)}</text>`,
  ];
  out.push(`<g class="legend">${items.join('')}</g>`);
  const width = Math.max(left + side + 16, left + 70 + textWidth(legend.point) + textWidth(legend.highlight) + textWidth(legend.quadrants));
  return `${open(spec.id, width, top + side + 42, spec.title, spec.desc)}${out.join('')}</svg>`;
}

/** Horizontal bars split into shares that sum to one (e.g. model, language and interaction variance). */
export function stackedChart(spec: StackedSpec): string {
  const labelW = Math.min(640, Math.max(60, ...spec.rows.map((r) => textWidth(r.label) + 14)));
  const plotW = 400;
  const out: string[] = [legendRow(spec.parts.map((label) => ({ label, shape: 'square' as const })), labelW)];
  let y = 26;
  for (const row of spec.rows) {
    const mid = y + ROW_H / 2;
    out.push(`<text class="row-label" x="${n(labelW - 8)}" y="${n(mid + 4)}" text-anchor="end">${esc(row.label)}</text>`);
    let x = labelW;
    row.values.forEach((v, i) => {
      if (v === null || !(v > 0)) return;
      const w = Math.min(1, v) * plotW;
      out.push(`<rect x="${n(x)}" y="${n(mid - 6)}" width="${n(w)}" height="12" fill="${colour(i)}"><title>${esc(`${row.label}: ${spec.parts[i] ?? ''} ${v.toFixed(2)}`)}</title></rect>`);
      x += w;
    });
    y += ROW_H;
  }
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(`<text class="tick" x="${n(labelW + t * plotW)}" y="${n(y + 14)}" text-anchor="middle">${t}</text>`);
  }
  out.push(`<text class="axis-label" x="${n(labelW + plotW / 2)}" y="${n(y + 30)}" text-anchor="middle">${esc(spec.axisLabel)}</text>`);
  return `${open(spec.id, labelW + plotW + 24, y + 40, spec.title, spec.desc)}${out.join('')}</svg>`;
}
