/**
 * report.html sections for P(True): reliability diagrams per setting (the language path of App. E,
 * per benchmark) and the Q × R heat maps (accuracy, AUROC, ECE per benchmark, means over models and
 * verifier languages), each with its numbers in a table beside it; no script library, no network.
 */
import { escapeHtml as esc, slug } from '../../../report/html/escape.js';
import { REPORT_CSS, REPORT_JS } from '../../../report/html/page.js';
import { matrixChart } from '../../../report/html/svg.js';
import { htmlTable, tableDetails } from '../../../report/html/table.js';
import { fmtNumber } from '../../../report/markdown.js';
import type { ReportMeta } from '../../../battery/types.js';
import { readoutWarning } from '../../../battery/readoutHealth.js';
import type { ReliabilityBin } from '../../../metrics/calibration.js';
import type { PtrueResults } from '../analysis/analyzeRows.js';
import type { ReliabilityDiagram } from '../analysis/reliability.js';
import type { MetricName } from '../analysis/types.js';
import { PTRUE_LANGUAGES } from '../types.js';

const n = (x: number): string => String(Math.round(x * 10) / 10);

/**
 * One reliability diagram: confidence on x, share correct on y, the diagonal of perfect
 * calibration, one bar per non-empty bin (its width the bin) and a dot at the bin's mean confidence.
 */
export function reliabilityChart(id: string, title: string, bins: readonly ReliabilityBin[]): string {
  const side = 220;
  const left = 40;
  const top = 10;
  const x = (p: number): number => left + p * side;
  const y = (p: number): number => top + side - p * side;
  const out: string[] = [];
  out.push(`<rect class="frame" x="${left}" y="${top}" width="${side}" height="${side}"/>`);
  out.push(`<line class="ref" x1="${n(x(0))}" y1="${n(y(0))}" x2="${n(x(1))}" y2="${n(y(1))}"><title>perfect calibration</title></line>`);
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(`<text class="tick" x="${n(x(t))}" y="${n(top + side + 13)}" text-anchor="middle">${t}</text>`);
    out.push(`<text class="tick" x="${left - 5}" y="${n(y(t) + 4)}" text-anchor="end">${t}</text>`);
  }
  for (const b of bins) {
    if (b.n === 0 || b.accuracy === null || b.confidence === null) continue;
    const tip = `${b.lo.toFixed(3)}–${b.hi.toFixed(3)}: n ${b.n}, confidence ${b.confidence.toFixed(3)}, correct ${b.accuracy.toFixed(3)}`;
    out.push(`<rect class="bar" x="${n(x(b.lo))}" y="${n(y(b.accuracy))}" width="${n((b.hi - b.lo) * side)}" height="${n(b.accuracy * side)}" fill="#0072b2" opacity="0.35"><title>${esc(tip)}</title></rect>`);
    out.push(`<circle class="pt" cx="${n(x(b.confidence))}" cy="${n(y(b.accuracy))}" r="3"><title>${esc(tip)}</title></circle>`);
  }
  out.push(`<text class="axis-label" x="${n(left + side / 2)}" y="${n(top + side + 28)}" text-anchor="middle">P(True)</text>`);
  out.push(`<text class="axis-label" transform="translate(12 ${n(top + side / 2)}) rotate(-90)" text-anchor="middle">share correct</text>`);
  const w = left + side + 12;
  const h = top + side + 36;
  return (
    `<svg id="${esc(id)}" class="chart" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-labelledby="${esc(id)}-t ${esc(id)}-d">` +
    `<title id="${esc(id)}-t">${esc(title)}</title><desc id="${esc(id)}-d">${esc(`Reliability diagram, 15 bins: ${title}`)}</desc>${out.join('')}</svg>`
  );
}

function reliabilitySection(diagrams: readonly ReliabilityDiagram[]): string {
  const benchmarks = [...new Set(diagrams.map((d) => d.benchmark))];
  const parts = benchmarks.map((b) => {
    const mine = diagrams.filter((d) => d.benchmark === b);
    const charts = mine.map((d) => `<figure>${reliabilityChart(`rel-${slug(b)}-${slug(d.setting)}`, `${b}: ${d.setting}`, d.bins)}<figcaption>${esc(d.setting)} (${d.n} rows)</figcaption></figure>`);
    const rows = mine.flatMap((d) => d.bins.filter((x) => x.n > 0).map((x) => [d.setting, `${x.index + 1}`, String(x.n), fmtNumber(x.confidence, 3), fmtNumber(x.accuracy, 3)]));
    return `<h3>${esc(b)}</h3><div class="row-of-charts">${charts.join('')}</div>${tableDetails({ caption: `${b}: reliability bins`, header: ['setting', 'bin', 'n', 'mean P(True)', 'share correct'], rows })}`;
  });
  return `<section id="reliability"><h2>Reliability diagrams per setting</h2><p>Pooled over models and the five target languages at each step of the path all-English → question localised → question and response → all three localised (App. E). Bars: share correct per P(True) bin; dots at the bin's mean P(True); dashed: perfect calibration.</p>${parts.join('')}</section>`;
}

const HEAT: readonly MetricName[] = ['accuracy', 'auroc', 'ece'];

/** Languages in the paper's order (en zh fr ja ko hi), others after them alphabetically. */
export function languageOrder(levels: readonly string[]): string[] {
  const rank = (l: string): number => {
    const i = (PTRUE_LANGUAGES as readonly string[]).indexOf(l);
    return i < 0 ? PTRUE_LANGUAGES.length : i;
  };
  return [...levels].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function heatmapSection(r: PtrueResults): string {
  const parts: string[] = [];
  for (const b of r.benchmarks) {
    const cells = r.qr.filter((c) => c.benchmark === b);
    const qs = languageOrder([...new Set(cells.map((c) => c.q))]);
    const rs = languageOrder([...new Set(cells.map((c) => c.r))]);
    const charts = HEAT.map((metric) =>
      matrixChart({
        id: `qr-${slug(b)}-${metric}`,
        title: `${b}: ${metric} by question (rows) and response language (columns)`,
        desc: `Mean ${metric} over models and verifier languages, per question × response language`,
        rowLabels: qs.map((q) => `Q ${q}`),
        colLabels: rs.map((x) => `R ${x}`),
        cell: (i, j) => {
          const c = cells.find((x) => x.q === qs[i] && x.r === rs[j]);
          const v = c?.means[metric] ?? null;
          return { value: v, title: `Q ${qs[i]} × R ${rs[j]}: ${metric} ${fmtNumber(v, 3)}` };
        },
        scale: 'share',
        legendLabel: metric,
      }),
    );
    const rows = cells.map((c) => [c.q, c.r, fmtNumber(c.means.accuracy, 3), fmtNumber(c.means.auroc, 3), fmtNumber(c.means.ece, 3), fmtNumber(c.means.brier, 3)]);
    parts.push(`<h3>${esc(b)}</h3><div class="matrices">${charts.map((c) => `<figure>${c}</figure>`).join('')}</div>${tableDetails({ caption: `${b}: Q × R means`, header: ['q', 'r', 'accuracy', 'AUROC', 'ECE', 'Brier'], rows })}`);
  }
  return `<section id="qr"><h2>Question × response language</h2><p>Means over models and verifier languages; colour: 0 red, 0.5 white, 1 blue.</p>${parts.join('')}</section>`;
}

function regimesSection(r: PtrueResults): string {
  const rows = r.regimes.map((g) => [g.benchmark, g.regime, String(g.pooled.n), fmtNumber(g.pooled.accuracy, 3), fmtNumber(g.cellMean.ece, 3), fmtNumber(g.cellMean.auroc, 3), fmtNumber(g.pooled.auroc, 3)]);
  return `<section id="regimes"><h2>Matching regimes</h2>${htmlTable({ caption: 'Cell-level means (App. C) and pooled AUROC', header: ['benchmark', 'regime', 'rows', 'accuracy', 'ECE (cells)', 'AUROC (cells)', 'AUROC (pooled)'], rows })}</section>`;
}

/** The battery's sections, in page order. */
export function ptrueSections(r: PtrueResults): string[] {
  return [regimesSection(r), heatmapSection(r), reliabilitySection(r.reliability)];
}

/** A whole report.html: the sections in the shared page style. */
export function renderPtrueReport(r: PtrueResults, meta: ReportMeta): string {
  const badge = r.simulated ? ' <span class="badge">SIMULATED</span>' : '';
  const unread = readoutWarning(r.readout);
  const notice =
    (r.simulated ? '<p class="notice">Every reply comes from simulated models: the numbers test the pipeline, not any model.</p>' : '') +
    (unread !== undefined ? `<p class="notice">${esc(unread)}</p>` : '');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(meta.campaign)}: P(True)</title><style>${REPORT_CSS}</style></head><body><h1>${esc(meta.campaign)}: P(True) across question, response and verifier languages${badge}</h1>${notice}${ptrueSections(r).join('')}<script>${REPORT_JS}</script></body></html>`;
}
