import type { CellSummaryRow, ItemShareRow } from './types.js';

/**
 * The rows of cell_summary.sql computed from item rows already in memory, so a local analysis does
 * not run item_shares twice (Same Judgment, Different Yes §3: only P and notP readings are decisive). Same order as
 * the SQL: model, language, form, constraint, reader.
 */
export function summarizeCells(rows: readonly ItemShareRow[]): CellSummaryRow[] {
  const groups = new Map<string, { model: string; language: string; form: string; constraint: string; reader: string; replies: number; decisive: number; n_p: number }>();
  for (const r of rows) {
    const key = `${r.model}\u0000${r.language}\u0000${r.form}\u0000${r.constraint}\u0000${r.reader}`;
    let g = groups.get(key);
    if (!g) {
      g = { model: r.model, language: r.language, form: r.form, constraint: r.constraint, reader: r.reader, replies: 0, decisive: 0, n_p: 0 };
      groups.set(key, g);
    }
    g.replies += r.n_replies;
    g.decisive += r.n_p + r.n_notp;
    g.n_p += r.n_p;
  }
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return [...groups.values()]
    .map((g) => ({ ...g, decisive_share: g.replies > 0 ? g.decisive / g.replies : 0, p_share: g.decisive > 0 ? g.n_p / g.decisive : null }))
    .sort((x, y) => cmp(x.model, y.model) || cmp(x.language, y.language) || cmp(x.form, y.form) || cmp(x.constraint, y.constraint) || cmp(x.reader, y.reader));
}
