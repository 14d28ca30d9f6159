/**
 * How far each language axis moves each metric (Disentangling Question, Response, and Verifier Languages Figure 2, §6.1–6.5): per benchmark, the
 * cell-level mean of every metric at each level of one factor — question, response or verifier
 * language — over all the other factors (models, the other languages), cells weighing the same.
 * And the Q × R table behind the heat maps: per benchmark × q × r, the mean over models and
 * verifier languages.
 */
import { groupBy } from '../../../api/battery.js';
import { cellMeans, cmp } from './cells.js';
import type { CellMetrics, MetricName } from './types.js';

export type Axis = 'q' | 'r' | 'v';

/**
 * The cell means of every group of cells that share the values `key` gives (a benchmark and one or
 * two languages), each with those values in `key` order.
 */
function meansBy<const K extends readonly string[]>(cells: readonly CellMetrics[], key: (c: CellMetrics) => K): { readonly key: K; readonly means: ReturnType<typeof cellMeans> }[] {
  return [...groupBy(cells, (c) => key(c).join('\u0000'))].map(([k, list]) => ({ key: k.split('\u0000') as unknown as K, means: cellMeans(list) }));
}

export interface AxisLevel {
  readonly benchmark: string;
  readonly axis: Axis;
  readonly level: string;
  readonly means: Record<MetricName, number | null> & { readonly cells: number };
}

/** Per benchmark, axis and level: cell-mean metrics. Also the span (max − min over levels) per axis. */
export function axisLevels(cells: readonly CellMetrics[]): AxisLevel[] {
  const out = (['q', 'r', 'v'] as const).flatMap((axis) =>
    meansBy(cells, (c) => [c.benchmark, c[axis]]).map(({ key: [benchmark, level], means }): AxisLevel => ({ benchmark, axis, level, means })),
  );
  return out.sort((a, b) => cmp(a.benchmark, b.benchmark) || cmp(a.axis, b.axis) || cmp(a.level, b.level));
}

export interface AxisSpan {
  readonly benchmark: string;
  readonly axis: Axis;
  readonly metric: MetricName;
  /** max − min of the level means; null with fewer than two levels. */
  readonly span: number | null;
  readonly lowest: string | null;
  readonly highest: string | null;
}

/** The span of every metric along every axis (Figure 2: "how far each language axis moves each metric"). */
export function axisSpans(levels: readonly AxisLevel[], metrics: readonly MetricName[]): AxisSpan[] {
  const out: AxisSpan[] = [];
  for (const [key, list] of groupBy(levels, (l) => `${l.benchmark}\u0000${l.axis}`)) {
    const [benchmark, axis] = key.split('\u0000') as [string, Axis];
    for (const metric of metrics) {
      const known = list.filter((l) => l.means[metric] !== null);
      if (known.length < 2) {
        out.push({ benchmark, axis, metric, span: null, lowest: null, highest: null });
        continue;
      }
      const sorted = [...known].sort((a, b) => (a.means[metric] as number) - (b.means[metric] as number));
      const lo = sorted[0]!;
      const hi = sorted[sorted.length - 1]!;
      out.push({ benchmark, axis, metric, span: (hi.means[metric] as number) - (lo.means[metric] as number), lowest: lo.level, highest: hi.level });
    }
  }
  return out;
}

export interface QrCell {
  readonly benchmark: string;
  readonly q: string;
  readonly r: string;
  readonly means: Record<MetricName, number | null> & { readonly cells: number };
}

/** Per benchmark × q × r: the cell means over models and verifier languages (the heat maps). */
export function qrTable(cells: readonly CellMetrics[]): QrCell[] {
  const out = meansBy(cells, (c) => [c.benchmark, c.q, c.r]).map(({ key: [benchmark, q, r], means }): QrCell => ({ benchmark, q, r, means }));
  return out.sort((a, b) => cmp(a.benchmark, b.benchmark) || cmp(a.q, b.q) || cmp(a.r, b.r));
}
