/**
 * Configuration cells and their summaries (Disentangling Question, Response, and Verifier Languages §5 "Aggregation": a configuration cell pools
 * the item rows of one model × q × r × v; summary tables weight listed cells or units equally across
 * models and verifier languages).
 */
import { groupByParts, summarizeConfidenceColumns } from '../../../api/battery.js';
import type { CellMetrics, MetricName, MetricSet, PtrueRow } from './types.js';

/**
 * Accuracy over every row; the confidence metrics over the rows with a valid P(True), in row order
 * (as columns: no object per row, summarizeConfidenceColumns).
 */
export function metricSet(rows: readonly PtrueRow[]): MetricSet {
  const p = new Float64Array(rows.length);
  const y = new Uint8Array(rows.length);
  let scored = 0;
  let correct = 0;
  for (const r of rows) {
    if (r.correct) correct++;
    const pt = r.p_true;
    if (pt !== null) {
      p[scored] = pt;
      y[scored] = r.correct ? 1 : 0;
      scored++;
    }
  }
  const s = summarizeConfidenceColumns(p.subarray(0, scored), y.subarray(0, scored));
  return {
    n: rows.length,
    invalid: rows.length - scored,
    accuracy: rows.length > 0 ? correct / rows.length : null,
    meanConfidence: s.meanConfidence,
    brier: s.brier,
    ece: s.ece,
    auroc: s.auroc,
  };
}

const SEP = '\u0000';

/** One CellMetrics per benchmark × model × q × r × v, sorted. */
export function configurationCells(rows: readonly PtrueRow[]): CellMetrics[] {
  const groups = groupByParts(rows, [(r) => r.benchmark, (r) => r.model, (r) => r.q, (r) => r.r, (r) => r.v], SEP);
  const out: CellMetrics[] = [];
  for (const [key, list] of groups) {
    const [benchmark, model, q, r, v] = key.split(SEP) as [string, string, string, string, string];
    out.push({ benchmark, model, q, r, v, ...metricSet(list) });
  }
  return out.sort((a, b) => cmp(a.benchmark, b.benchmark) || cmp(a.model, b.model) || cmp(a.q, b.q) || cmp(a.r, b.r) || cmp(a.v, b.v));
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The mean of a metric over cells, each cell weighing the same; cells where it is null are left out. */
export function cellMean(cells: readonly MetricSet[], metric: MetricName): { readonly mean: number | null; readonly cells: number } {
  let sum = 0;
  let n = 0;
  for (const c of cells) {
    const v = c[metric];
    if (v === null) continue;
    sum += v;
    n++;
  }
  return { mean: n > 0 ? sum / n : null, cells: n };
}

/** Means of every metric over cells (the cell-level averages of App. C). */
export function cellMeans(cells: readonly MetricSet[]): Record<MetricName, number | null> & { readonly cells: number; readonly aurocCells: number } {
  const auroc = cellMean(cells, 'auroc');
  return {
    accuracy: cellMean(cells, 'accuracy').mean,
    brier: cellMean(cells, 'brier').mean,
    ece: cellMean(cells, 'ece').mean,
    auroc: auroc.mean,
    cells: cells.length,
    aurocCells: auroc.cells,
  };
}
