/**
 * The further comparisons of readouts in Same Judgment, Different Yes §4: residual-profile r
 * between the readouts of a cell (readoutResiduals.ts) and the same replies read twice with
 * identical weights (sameReplies.ts).
 */
import type { ReadoutComparison, ReadoutConvergence } from './estimates.js';
import type { CellKey, Readout } from './vocabulary.js';

/** Residual profiles of one cell under two readouts, on their common residual stories (Same Judgment, Different Yes §4). */
export interface ResidualReadoutComparison extends CellKey {
  readonly readout_a: Readout;
  readonly readout_b: Readout;
  readonly n_common: number;
  /** Null below the minimum of common stories or without variance (e.g. a language with one model). */
  readonly residual_r: number | null;
}

/** Same Judgment, Different Yes §4: "median residual correlations among the convergent pairs", per readout pair over cells. */
export interface ResidualConvergence {
  readonly readout_a: Readout;
  readonly readout_b: Readout;
  readonly n_cells: number;
  readonly median_residual_r: number | null;
  readonly q10_residual_r: number | null;
  readonly q90_residual_r: number | null;
}

/**
 * The same replies read twice with identical weights (Same Judgment, Different Yes §3, §4): readouts
 * `f/c/judge:j [with rule]` and `f/c/rule [with judge:j]` rest on the replies both read decisively.
 */
export interface SameRepliesResults {
  readonly comparisons: readonly ReadoutComparison[];
  readonly convergence: readonly ReadoutConvergence[];
  /** Story scores behind them (cell × paired readout × story). */
  readonly storyScores: number;
}
