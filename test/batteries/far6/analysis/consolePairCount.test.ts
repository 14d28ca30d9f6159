/**
 * The terminal table names as many readout pairs as readout_convergence.csv holds: pairs that no
 * cell could compare (too few common stories) are in the file and counted apart, not left out of
 * an "all N readout pairs" that the file contradicts.
 */
import { describe, expect, it } from 'vitest';
import { formatConsoleTable } from '../../../../lib/batteries/far6/report/report.js';
import { fixtureResults } from './htmlFixture.js';

describe('the console table', () => {
  it('counts every pair of readout_convergence.csv, those compared in no cell apart', () => {
    const base = fixtureResults();
    const compared = base.convergence.filter((c) => c.n_cells > 0).length;
    expect(compared).toBeGreaterThan(0);
    const never = { ...base.convergence[0]!, readout_a: 'f/free/rule', readout_b: 'f/free/judge:j', n_cells: 0 };
    const results = { ...base, convergence: [...base.convergence, never] };
    const all = results.convergence.length;
    const text = formatConsoleTable(results);
    expect(text).toContain(`${compared} readout pairs compared in at least one cell, ${all - compared} in none; all ${all}: readout_convergence.csv`);
    expect(text).not.toMatch(new RegExp(`all ${compared} readout pairs`));
    // Every pair compared: the short form.
    expect(formatConsoleTable({ ...base, convergence: base.convergence.filter((c) => c.n_cells > 0) })).toContain(`all ${compared} readout pairs: readout_convergence.csv`);
  });
});
