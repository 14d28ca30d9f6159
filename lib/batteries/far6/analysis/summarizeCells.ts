import { Readouts } from './estimators.js';
import type { CellSummaryRow, ItemShareRow, Readout } from './types.js';

interface Group {
  model: string;
  language: string;
  form: string;
  constraint: string;
  reader: string;
  replies: number;
  decisive: number;
  n_p: number;
}

/**
 * The rows of cell_summary.sql computed from item rows already in memory, so a local analysis does
 * not run item_shares twice (Same Judgment, Different Yes §3: only P and notP readings are decisive). Same order as
 * the SQL: model, language, form, constraint, reader.
 */
export function summarizeCells(rows: readonly ItemShareRow[]): CellSummaryRow[] {
  const cells = new CellSummaries();
  cells.add(rows);
  return cells.rows();
}

/** summarizeCells fed item rows a part at a time (analyzeCampaign.ts streams them); the sums run in row order either way. */
export class CellSummaries {
  // model → language → readout: no key string per row.
  private readonly byModel = new Map<string, Map<string, Map<Readout, Group>>>();
  private readonly groups: Group[] = [];
  private readonly readouts = new Readouts();

  add(rows: readonly ItemShareRow[]): void {
    const { byModel, groups, readouts } = this;
    for (const r of rows) {
      let byLanguage = byModel.get(r.model);
      if (byLanguage === undefined) byModel.set(r.model, (byLanguage = new Map()));
      let byReadout = byLanguage.get(r.language);
      if (byReadout === undefined) byLanguage.set(r.language, (byReadout = new Map()));
      const readout = readouts.of(r);
      let g = byReadout.get(readout);
      if (g === undefined) {
        g = { model: r.model, language: r.language, form: r.form, constraint: r.constraint, reader: r.reader, replies: 0, decisive: 0, n_p: 0 };
        byReadout.set(readout, g);
        groups.push(g);
      }
      g.replies += r.n_replies;
      g.decisive += r.n_p + r.n_notp;
      g.n_p += r.n_p;
    }
  }

  rows(): CellSummaryRow[] {
    const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    return this.groups
      .map((g) => ({ ...g, decisive_share: g.replies > 0 ? g.decisive / g.replies : 0, p_share: g.decisive > 0 ? g.n_p / g.decisive : null }))
      .sort((x, y) => cmp(x.model, y.model) || cmp(x.language, y.language) || cmp(x.form, y.form) || cmp(x.constraint, y.constraint) || cmp(x.reader, y.reader));
  }
}
