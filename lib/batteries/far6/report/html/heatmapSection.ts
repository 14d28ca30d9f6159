/**
 * Between-cell heat maps (Same Judgment, Different Yes §5, Figure 3c–f): story-level r and
 * residual-profile r between every two cells under each identity readout, with the cells ordered
 * by model and by language.
 */
import { escapeHtml as esc, fmtNumber as fmt, matrixChart, slug, tableDetails } from '../../../../api/battery.js';
import type { AnalysisResults, ProfilePair } from '../../analysis/types.js';
import { cellName, empty, introducedSection, NO_IDENTITY, NO_IDENTITY_READOUT } from './section.js';
import type { Section } from './section.js';

interface Cell {
  readonly model: string;
  readonly language: string;
}

function pairKey(a: Cell, b: Cell): string {
  const ka = `${a.model}\u0000${a.language}`;
  const kb = `${b.model}\u0000${b.language}`;
  return ka < kb ? `${ka}\u0001${kb}` : `${kb}\u0001${ka}`;
}

/** Between-cell story-level r and residual r, ordered by model and by language (Figure 3c–f). */
export function heatmapSection(results: AnalysisResults): Section {
  const s = introducedSection(
    'heatmaps',
    'Between-cell correlations',
    'Same Judgment, Different Yes §5, Figure 3c–f: story-level r and residual-profile r (language consensus and cell mean removed) between every two cells on their common stories, cells grouped by model and then by language. Green: positive, purple: negative (neither is better: the maps show where cells agree), grey: too few common stories, dark: the cell itself.',
  );
  const id = results.identity;
  if (!id) return s.none(NO_IDENTITY);
  const parts: string[] = [];
  if (id.readouts.length === 0) parts.push(empty(NO_IDENTITY_READOUT));
  for (const readout of id.readouts) {
    const pairs = id.pairs.filter((q) => q.readout === readout);
    const byKey = new Map<string, ProfilePair>();
    const cellMap = new Map<string, Cell>();
    for (const q of pairs) {
      const a = { model: q.model_a, language: q.language_a };
      const b = { model: q.model_b, language: q.language_b };
      byKey.set(pairKey(a, b), q);
      cellMap.set(`${a.model}\u0000${a.language}`, a);
      cellMap.set(`${b.model}\u0000${b.language}`, b);
    }
    parts.push(`<h3>${esc(readout)}</h3>`);
    const cells = [...cellMap.values()];
    if (cells.length < 2) {
      parts.push(empty('Fewer than two cells have story scores under this readout.'));
      continue;
    }
    const cmp = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
    const orders: [string, Cell[]][] = [
      ['model', [...cells].sort((a, b) => cmp(a.model, b.model) || cmp(a.language, b.language))],
      ['language', [...cells].sort((a, b) => cmp(a.language, b.language) || cmp(a.model, b.model))],
    ];
    const grid: string[] = [];
    for (const [by, order] of orders) {
      for (const metric of ['r', 'residual_r'] as const) {
        const label = metric === 'r' ? 'story-level r' : 'residual r';
        const groups = order.map((c) => (by === 'model' ? c.model : c.language));
        grid.push(
          `<figure class="matrix">${matrixChart({
            id: `hm-${slug(readout)}-${metric === 'r' ? 'story' : 'residual'}-by-${by}`,
            title: `${readout}: ${label} between cells, grouped by ${by}`,
            desc: `${order.length} × ${order.length} cells ordered by ${by}; ${pairs.length} cell pairs.`,
            rowLabels: order.map((c) => cellName(c.model, c.language)),
            colLabels: order.map((c) => cellName(c.model, c.language)),
            rowGroups: groups,
            colGroups: groups,
            scale: 'r',
            // Cells that agree are not better than cells that differ: the question is where they do.
            better: 'neither',
            legendLabel: label,
            cell: (i, j) => {
              const a = order[i] as Cell;
              const b = order[j] as Cell;
              if (i === j) return { value: null, diagonal: true, title: cellName(a.model, a.language) };
              const q = byKey.get(pairKey(a, b));
              const v = q ? q[metric] : null;
              const n = q ? (metric === 'r' ? q.n_common : q.n_common_residual) : 0;
              return { value: v, title: `${cellName(a.model, a.language)} × ${cellName(b.model, b.language)}: ${label} ${fmt(v)} on ${n} stories${q ? ` (${q.class.replace('_', ' ')})` : ''}` };
            },
          })}<figcaption class="m-caption">${esc(`${label} between cells, grouped by ${by} (Same Judgment, Different Yes §5, Figure 3c–f)`)}</figcaption></figure>`,
        );
      }
    }
    parts.push(`<div class="matrices">${grid.join('')}</div>`);
    parts.push(
      tableDetails({
        caption: `${readout}: cell pairs (profile_pairs.csv)`,
        csv: 'profile_pairs.csv',
        header: ['model A', 'language A', 'model B', 'language B', 'class', 'common stories', 'r', 'residual stories', 'residual r', 'mean |Δ|'],
        rows: pairs.map((q) => [q.model_a, q.language_a, q.model_b, q.language_b, q.class, String(q.n_common), fmt(q.r), String(q.n_common_residual), fmt(q.residual_r), fmt(q.mean_abs_diff)]),
      }),
    );
  }
  return s.of(parts);
}
