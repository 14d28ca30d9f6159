import { describe, expect, it } from 'vitest';
import { averageShares, explainedVarianceShares, type FactorRow } from '../../lib/metrics/variance.js';

const row = (q: string, r: string, y: number, v?: string): FactorRow => ({ levels: { q, r, ...(v ? { v } : {}) }, y });

describe('explained-variance shares', () => {
  it('decomposes a 2 × 2 table by hand', () => {
    // Cell means: (a,x)=1 (a,y)=0 (b,x)=0 (b,y)=0. Grand 0.25; q means a 0.5 b 0; r means x 0.5 y 0.
    // SS_q = (4/2)(0.25² + 0.25²) = 0.25, SS_r = 0.25, SS_q×r = (4/4)·4·0.25² = 0.25 → ⅓ each.
    const rows = [row('a', 'x', 1), row('a', 'y', 0), row('b', 'x', 0), row('b', 'y', 0)];
    const d = explainedVarianceShares(rows, ['q', 'r'], { interactions: 'two-way' });
    expect(d.ok).toBe(true);
    if (!d.ok) return;
    expect(d.value.terms.map((t) => [t.term, t.ss])).toEqual([['q', 0.25], ['r', 0.25], ['q×r', 0.25]]);
    for (const t of d.value.terms) expect(t.share).toBeCloseTo(1 / 3, 12);
    expect(d.value.total).toBeCloseTo(0.75, 12);
    expect(d.value.residual).toBe(0);
    expect(d.value.r2).toBe(1);
  });

  it('gives a pure main effect all of the explained variance, and averages rows into cells first', () => {
    // y depends on q only; two rows per cell, each cell's mean 0.8 (q=a) or 0.2 (q=b).
    const rows = ['x', 'y', 'z'].flatMap((r) => [row('a', r, 1), row('a', r, 0.6), row('b', r, 0), row('b', r, 0.4)]);
    const d = explainedVarianceShares(rows, ['q', 'r'], { interactions: 'two-way' });
    if (!d.ok) throw new Error(d.reason);
    const [q, r, qr] = d.value.terms.map((t) => t.share!);
    expect(q).toBeCloseTo(1, 12);
    expect(r).toBeCloseTo(0, 12);
    expect(qr).toBeCloseTo(0, 12);
    expect(d.value.terms[0]!.ss).toBeCloseTo(6 * 0.09, 12);
    expect(d.value.rows).toBe(12);
    expect(d.value.cells).toBe(6);
  });

  it('leaves the three-way interaction as residual with three factors', () => {
    // y = 1 only when q = r = v = "1": a three-way pattern that main effects and pairs explain in part.
    const rows: FactorRow[] = [];
    for (const q of ['0', '1']) for (const r of ['0', '1']) for (const v of ['0', '1']) rows.push(row(q, r, q === '1' && r === '1' && v === '1' ? 1 : 0, v));
    const d = explainedVarianceShares(rows, ['q', 'r', 'v'], { interactions: 'two-way' });
    if (!d.ok) throw new Error(d.reason);
    // Total = 8 · (1/8)(7/8) = 0.875; each effect SS = 8 · (1/8)² = 0.125 (7 effects) → residual 0.125.
    expect(d.value.total).toBeCloseTo(0.875, 12);
    expect(d.value.explained).toBeCloseTo(0.75, 12);
    expect(d.value.residual).toBeCloseTo(0.125, 12);
    expect(d.value.terms).toHaveLength(6);
    for (const t of d.value.terms) expect(t.share).toBeCloseTo(1 / 6, 12);
  });

  it('main effects only on request; null shares and R² when nothing varies', () => {
    const flat = [row('a', 'x', 0.5), row('a', 'y', 0.5), row('b', 'x', 0.5), row('b', 'y', 0.5)];
    const d = explainedVarianceShares(flat, ['q', 'r']);
    if (!d.ok) throw new Error(d.reason);
    expect(d.value.terms.map((t) => t.term)).toEqual(['q', 'r']);
    expect(d.value.terms.every((t) => t.share === null)).toBe(true);
    expect(d.value.r2).toBeNull();
  });

  it('refuses an incomplete table, naming the missing cell, and rows without a factor', () => {
    const d = explainedVarianceShares([row('a', 'x', 1), row('a', 'y', 0), row('b', 'x', 0)], ['q', 'r'], { interactions: 'two-way' });
    expect(d).toEqual({ ok: false, reason: 'incomplete design: no row for q=b, r=y (3 of 4 cells)' });
    expect(explainedVarianceShares([], ['q'])).toEqual({ ok: false, reason: 'no rows' });
    expect(() => explainedVarianceShares([row('a', 'x', 1)], ['v'])).toThrow(/no level for factor "v"/);
  });

  it('averages shares across models, skipping a model with nothing explained', () => {
    const a = explainedVarianceShares([row('a', 'x', 1), row('a', 'y', 1), row('b', 'x', 0), row('b', 'y', 0)], ['q', 'r']);
    const b = explainedVarianceShares([row('a', 'x', 1), row('a', 'y', 0), row('b', 'x', 1), row('b', 'y', 0)], ['q', 'r']);
    const c = explainedVarianceShares([row('a', 'x', 1), row('a', 'y', 1), row('b', 'x', 1), row('b', 'y', 1)], ['q', 'r']);
    if (!a.ok || !b.ok || !c.ok) throw new Error('complete');
    expect(averageShares([a.value, b.value, c.value])).toEqual([
      { term: 'q', share: 0.5, n: 2 },
      { term: 'r', share: 0.5, n: 2 },
    ]);
  });
});
