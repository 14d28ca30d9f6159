/**
 * Matching regimes (Disentangling Question, Response, and Verifier Languages §5–6, Table 4, App. C): each q × r × v condition belongs to exactly one
 * of five — all three languages equal, only Q = R, only R = V, only Q = V, none equal (two equal
 * pairs imply the third, so these are exhaustive and disjoint: with six languages 6, 30, 30, 30 and
 * 120 of the 216 conditions).
 *
 * Two summaries per regime, both reported (App. C: "cell-level AUROCs … rather than pooled-regime
 * AUROCs … the pooled regime metric can reward differences between conditions within a regime"):
 * `pooled` pools the regime's item rows into one metric; `cellMean` averages the configuration
 * cells' metrics, each cell weighing the same (across models and verifier languages).
 */
import { groupBy, groupByParts } from '../../../api/battery.js';
import type { LanguageCode } from '../../../api/battery.js';
import { cellMeans, metricSet } from './cells.js';
import type { CellMetrics, MetricName, MetricSet, PtrueRow } from './types.js';

export const REGIMES = ['Q=R=V', 'Q=R', 'R=V', 'Q=V', 'none'] as const;
export type Regime = (typeof REGIMES)[number];

/** The regime of a condition. */
export function regimeOf(q: LanguageCode, r: LanguageCode, v: LanguageCode): Regime {
  if (q === r && r === v) return 'Q=R=V';
  if (q === r) return 'Q=R';
  if (r === v) return 'R=V';
  if (q === v) return 'Q=V';
  return 'none';
}

export interface RegimeSummary {
  readonly benchmark: string;
  readonly regime: Regime;
  readonly pooled: MetricSet;
  readonly cellMean: Record<MetricName, number | null> & { readonly cells: number; readonly aurocCells: number };
}

/** Per benchmark × regime: pooled and cell-mean metrics, regimes in table order. */
export function regimeSummaries(rows: readonly PtrueRow[], cells: readonly CellMetrics[]): RegimeSummary[] {
  const out: RegimeSummary[] = [];
  const rowsBy = groupByParts(rows, [(r) => r.benchmark, (r) => regimeOf(r.q, r.r, r.v)], '\u0000');
  const cellsBy = groupBy(cells, (c) => `${c.benchmark}\u0000${regimeOf(c.q, c.r, c.v)}`);
  // The benchmarks from the groups' keys (a regime's name holds no separator), not from another pass over the rows.
  const benchmarks = [...new Set([...rowsBy.keys()].map((k) => k.slice(0, k.lastIndexOf('\u0000'))))].sort();
  for (const benchmark of benchmarks) {
    for (const regime of REGIMES) {
      const key = `${benchmark}\u0000${regime}`;
      const rs = rowsBy.get(key);
      if (!rs) continue;
      out.push({ benchmark, regime, pooled: metricSet(rs), cellMean: cellMeans(cellsBy.get(key) ?? []) });
    }
  }
  return out;
}
