/**
 * Explained-variance shares of crossed factors and their two-way interactions, shared by
 * batteries. Disentangling Question, Response, and Verifier Languages §5 "Accuracy decomposition" and "Configuration-level decomposition" decompose
 * correctness (or a cell metric) by question language, response language, verifier language or
 * stratum "and their two-way interactions", and report each term's share of the explained sum of
 * squares (the shares of §6.3 add up to 100 %: TriviaQA 51.0 + 37.4 + 11.6).
 *
 * How it is computed (a choice; the paper gives the shares, not the estimator):
 * 1. Rows are averaged into cells, one per combination of the factors' levels, and every cell
 *    weighs the same (an unweighted-means analysis). With the same number of rows per cell — the
 *    paper's design: every item in every condition — this is exactly the ANOVA of the rows, since
 *    each term's sum of squares is then the cell-level one times the rows per cell, and shares are
 *    unchanged.
 * 2. In a complete crossed table of cell means the terms are orthogonal, so each has one sum of
 *    squares whatever the order: SS_A = (C/|A|) Σ_a (m_a − m)² and
 *    SS_AB = (C/(|A||B|)) Σ_ab (m_ab − m_a − m_b + m)², C the number of cells, m the marginal means.
 * 3. share(term) = SS_term / Σ SS_terms. What the terms leave (three-way and higher interactions)
 *    is reported apart as `residual`, with R² = explained / total over the cells.
 *
 * An incomplete table (a combination with no row) has no orthogonal decomposition: the function
 * then returns null and names the first missing cell, rather than an order-dependent answer.
 */

/** One observation: its level of each factor, and the value (0/1 correctness, a cell's ECE …). */
export interface FactorRow {
  readonly levels: Readonly<Record<string, string>>;
  readonly y: number;
}

export interface VarianceTerm {
  /** `q`, or `q×r` for an interaction. */
  readonly term: string;
  readonly factors: readonly string[];
  /** Sum of squares over the cell means. */
  readonly ss: number;
  /** Share of the explained sum of squares (Σ over the terms = 1); null when nothing is explained. */
  readonly share: number | null;
}

export interface VarianceDecomposition {
  readonly terms: readonly VarianceTerm[];
  readonly explained: number;
  /** Cell-level sum of squares the terms leave (interactions of three or more factors). */
  readonly residual: number;
  readonly total: number;
  /** explained / total; null when the cell means do not vary. */
  readonly r2: number | null;
  readonly cells: number;
  readonly rows: number;
}

export type VarianceResult = { readonly ok: true; readonly value: VarianceDecomposition } | { readonly ok: false; readonly reason: string };

const SEP = '\u0000';

/**
 * Shares of the main effects of `factors` and, with `interactions: 'two-way'`, of every pair of them.
 * @example explainedVarianceShares(rows, ['q', 'r'], { interactions: 'two-way' }) // terms q, r, q×r
 */
export function explainedVarianceShares(
  rows: readonly FactorRow[],
  factors: readonly string[],
  options: { readonly interactions?: 'none' | 'two-way' } = {},
): VarianceResult {
  if (factors.length === 0) return { ok: false, reason: 'no factors given' };
  if (rows.length === 0) return { ok: false, reason: 'no rows' };
  const levels = factors.map((f) => [...new Set(rows.map((r) => levelOf(r, f)))].sort());
  // Cell means.
  const sums = new Map<string, { sum: number; n: number }>();
  for (const r of rows) {
    if (!Number.isFinite(r.y)) return { ok: false, reason: `a row has the value ${r.y}; expected a finite number` };
    const key = factors.map((f) => levelOf(r, f)).join(SEP);
    const s = sums.get(key) ?? { sum: 0, n: 0 };
    s.sum += r.y;
    s.n += 1;
    sums.set(key, s);
  }
  const cellCount = levels.reduce((k, l) => k * l.length, 1);
  if (sums.size < cellCount) {
    const missing = firstMissing(levels, sums);
    return { ok: false, reason: `incomplete design: no row for ${factors.map((f, i) => `${f}=${missing[i]}`).join(', ')} (${sums.size} of ${cellCount} cells)` };
  }
  const cells = [...sums.entries()].map(([key, s]) => ({ levels: key.split(SEP), mean: s.sum / s.n }));
  const grand = cells.reduce((t, c) => t + c.mean, 0) / cellCount;
  const marginal = (idx: readonly number[]): Map<string, number> => {
    const acc = new Map<string, { sum: number; n: number }>();
    for (const c of cells) {
      const key = idx.map((i) => c.levels[i]).join(SEP);
      const a = acc.get(key) ?? { sum: 0, n: 0 };
      a.sum += c.mean;
      a.n += 1;
      acc.set(key, a);
    }
    return new Map([...acc].map(([k, a]) => [k, a.sum / a.n]));
  };
  const mains = factors.map((_, i) => marginal([i]));
  const terms: { term: string; factors: string[]; ss: number }[] = factors.map((f, i) => {
    let ss = 0;
    for (const m of mains[i]!.values()) ss += (m - grand) ** 2;
    return { term: f, factors: [f], ss: (cellCount / levels[i]!.length) * ss };
  });
  if (options.interactions === 'two-way') {
    for (let i = 0; i < factors.length; i++) {
      for (let j = i + 1; j < factors.length; j++) {
        let ss = 0;
        for (const [key, m] of marginal([i, j])) {
          const [a, b] = key.split(SEP) as [string, string];
          ss += (m - mains[i]!.get(a)! - mains[j]!.get(b)! + grand) ** 2;
        }
        terms.push({ term: `${factors[i]}×${factors[j]}`, factors: [factors[i]!, factors[j]!], ss: (cellCount / (levels[i]!.length * levels[j]!.length)) * ss });
      }
    }
  }
  const explained = terms.reduce((t, x) => t + x.ss, 0);
  const total = cells.reduce((t, c) => t + (c.mean - grand) ** 2, 0);
  // Rounding can leave a residual of −1e-17 in a saturated model.
  const residual = Math.max(0, total - explained);
  const tiny = 1e-12 * Math.max(1, total);
  return {
    ok: true,
    value: {
      terms: terms.map((t) => ({ ...t, share: explained > tiny ? t.ss / explained : null })),
      explained,
      residual,
      total,
      r2: total > tiny ? Math.min(1, explained / total) : null,
      cells: cellCount,
      rows: rows.length,
    },
  };
}

function levelOf(row: FactorRow, factor: string): string {
  const v = row.levels[factor];
  if (v === undefined) throw new RangeError(`explainedVarianceShares: a row has no level for factor "${factor}"`);
  return v;
}

function firstMissing(levels: readonly (readonly string[])[], present: ReadonlyMap<string, unknown>): string[] {
  const walk = (i: number, prefix: string[]): string[] | null => {
    if (i === levels.length) return present.has(prefix.join(SEP)) ? null : prefix;
    for (const l of levels[i]!) {
      const found = walk(i + 1, [...prefix, l]);
      if (found) return found;
    }
    return null;
  };
  return walk(0, []) ?? [];
}

/**
 * Mean share of each term over several decompositions (Disentangling Question, Response, and Verifier Languages §5: "averaging explained-sum
 * shares across models"); a decomposition whose shares are null (nothing explained) is left out.
 */
export function averageShares(decompositions: readonly VarianceDecomposition[]): { readonly term: string; readonly share: number | null; readonly n: number }[] {
  const order: string[] = [];
  const acc = new Map<string, { sum: number; n: number }>();
  for (const d of decompositions) {
    for (const t of d.terms) {
      if (!acc.has(t.term)) {
        acc.set(t.term, { sum: 0, n: 0 });
        order.push(t.term);
      }
      if (t.share === null) continue;
      const a = acc.get(t.term)!;
      a.sum += t.share;
      a.n += 1;
    }
  }
  return order.map((term) => {
    const a = acc.get(term)!;
    return { term, share: a.n > 0 ? a.sum / a.n : null, n: a.n };
  });
}
