/**
 * Explained-variance shares of the language factors (Disentangling Question, Response, and Verifier Languages §5 "Accuracy decomposition",
 * "Configuration-level decomposition", §6.3, §6.5), per benchmark, fitted per model and averaged
 * across models (lib/metrics/variance.ts: unweighted cell means, orthogonal sums of squares,
 * shares of the explained sum). The paper treats the shares as provisional descriptions, not
 * identified effects; so do the tables.
 *
 * - Accuracy: one observation per reply (the verifier copies add nothing, §5), factors q, r and the
 *   stratum where the benchmark has one (LSQA content subset, MMMLU subject group), with their
 *   two-way interactions.
 * - Configuration level: a cell metric (AUROC, ECE, Brier) over the q × r × v cells, with two-way
 *   interactions; with `stratum` the cells are split by stratum too (LSQA "at the subset-cell level").
 *   A model whose table has a hole (a cell with an undefined AUROC) is left out of the average and
 *   listed with the reason.
 */
import { averageShares, explainedVarianceShares, groupByParts } from '../../../api/battery.js';
import type { FactorRow, VarianceDecomposition } from '../../../api/battery.js';
import { metricSet } from './cells.js';
import { replies } from './views.js';
import type { MetricName, PtrueRow } from './types.js';

export interface ModelDecomposition {
  readonly model: string;
  readonly decomposition: VarianceDecomposition | null;
  /** Why there is none (an incomplete table). */
  readonly reason: string | null;
}

export interface Decomposition {
  readonly benchmark: string;
  /** `accuracy` (reply level) or a cell metric. */
  readonly outcome: 'accuracy' | MetricName;
  readonly factors: readonly string[];
  readonly perModel: readonly ModelDecomposition[];
  /** Shares averaged across the models that have one. */
  readonly mean: readonly { readonly term: string; readonly share: number | null; readonly n: number }[];
}

/** Whether every row of the benchmark has a stratum, and there are at least two. */
export function hasStrata(rows: readonly PtrueRow[]): boolean {
  // One pass and no array of the strata: at the paper's size a benchmark has two million rows.
  let first: string | null = null;
  let two = false;
  for (const r of rows) {
    const s = r.stratum;
    if (s === null) return false;
    if (first === null) first = s;
    else if (s !== first) two = true;
  }
  return two;
}

function decompose(benchmark: string, outcome: Decomposition['outcome'], factors: readonly string[], byModel: Map<string, FactorRow[]>): Decomposition {
  const perModel: ModelDecomposition[] = [...byModel].map(([model, rows]) => {
    const d = explainedVarianceShares(rows, factors, { interactions: 'two-way' });
    return d.ok ? { model, decomposition: d.value, reason: null } : { model, decomposition: null, reason: d.reason };
  });
  const complete = perModel.flatMap((m) => (m.decomposition ? [m.decomposition] : []));
  return { benchmark, outcome, factors, perModel, mean: averageShares(complete) };
}

/**
 * Reply-level accuracy shares of q, r (and stratum) for one benchmark's rows. The stratum enters
 * when every row has one (`stratum: 'auto'`, the default), or on request.
 */
export function accuracyDecomposition(benchmark: string, rows: readonly PtrueRow[], options: { readonly stratum?: 'auto' | boolean } = {}): Decomposition {
  const stratum = options.stratum ?? 'auto';
  const factors = (stratum === 'auto' ? hasStrata(rows) : stratum && hasStrata(rows)) ? ['q', 'r', 'stratum'] : ['q', 'r'];
  // One observation per reply: the verifier copies share their correctness. The first copy of
  // each, in first-seen order (views.ts replies; the rows are one benchmark's).
  const byModel = new Map<string, FactorRow[]>();
  for (const r of replies(rows)) {
    const levels: Record<string, string> = { q: r.q, r: r.r };
    if (factors.includes('stratum')) levels.stratum = r.stratum as string;
    const target = byModel.get(r.model) ?? [];
    target.push({ levels, y: r.correct ? 1 : 0 });
    byModel.set(r.model, target);
  }
  return decompose(benchmark, 'accuracy', factors, byModel);
}

/** Configuration-level shares of q, r, v (and stratum) in a cell metric, for one benchmark's rows. */
export function configurationDecomposition(benchmark: string, rows: readonly PtrueRow[], metric: MetricName, options: { readonly stratum?: boolean } = {}): Decomposition {
  return configurationDecompositions(benchmark, rows, [metric], options)[0]!;
}

/**
 * configurationDecomposition for several metrics, in their order: the rows are grouped into cells
 * and each cell's metrics computed once for all of them (at the paper's size each grouping is a
 * pass over two million rows), each metric's result that of configurationDecomposition.
 */
export function configurationDecompositions(benchmark: string, rows: readonly PtrueRow[], metrics: readonly MetricName[], options: { readonly stratum?: boolean } = {}): Decomposition[] {
  const withStratum = options.stratum === true && hasStrata(rows);
  const factors = withStratum ? ['q', 'r', 'v', 'stratum'] : ['q', 'r', 'v'];
  const cells = groupByParts(rows, [(r) => r.model, (r) => r.q, (r) => r.r, (r) => r.v, withStratum ? (r) => r.stratum ?? '' : () => ''], '\u0000');
  const byMetric = metrics.map(() => new Map<string, FactorRow[]>());
  for (const list of cells.values()) {
    const r = list[0]!;
    const set = metricSet(list);
    const levels: Record<string, string> = { q: r.q, r: r.r, v: r.v };
    if (withStratum) levels.stratum = r.stratum as string;
    metrics.forEach((metric, k) => {
      const byModel = byMetric[k]!;
      const target = byModel.get(r.model) ?? [];
      byModel.set(r.model, target);
      // An undefined metric (AUROC of an all-correct cell) leaves a hole: the model's table is then incomplete.
      const y = set[metric];
      if (y !== null) target.push({ levels, y });
    });
  }
  return metrics.map((metric, k) => decompose(benchmark, metric, factors, byMetric[k]!));
}
