/**
 * What estimators.ts computes from item rows (Same Judgment, Different Yes §3, §4, §6 and
 * "Estimation steps"): story scores s and b, cell habits, and readouts compared within a cell and
 * over cells.
 */
import type { CellKey, Readout } from './vocabulary.js';

/** Story score of one cell under one readout: s and b averaged over concept pairs with support. */
export interface StoryScore extends CellKey {
  readonly readout: Readout;
  readonly story: string;
  readonly story_group: string;
  /** Judgment s = (q_P + q_notP) / 2, averaged over concept pairs. */
  readonly s: number;
  /** Keying bias b = (q_P − q_notP) / 2, averaged over the same concept pairs. */
  readonly b: number;
  /** Concept pairs with decisive support in both keyings. */
  readonly n_pairs: number;
}

/** Answer habits of one cell under one readout (Same Judgment, Different Yes §6). */
export interface CellHabit extends CellKey {
  readonly readout: Readout;
  /** Stories with a score. */
  readonly n_stories: number;
  /** Mean b over stories (negative: a preference for the side not named, e.g. for "no"). */
  readonly keying_bias: number;
  /**
   * Label readouts: half the difference between choosing the second- and the first-listed
   * proposition, averaged over keyings, concept pairs and stories; null elsewhere or without
   * support in both positions.
   */
  readonly second_listed_pref: number | null;
  /** Stories that carry a second-listed preference. */
  readonly n_stories_position: number;
  /**
   * Label readouts: half the difference between choosing the proposition that contains the named
   * term and the other one, averaged over orders. Algebraically equal to `keying_bias` there
   * (see estimators.ts); null for other constraints, where the answer is not a choice between
   * propositions.
   */
  readonly named_term_pull: number | null;
}

/** Two readouts of one cell compared on their common stories (Same Judgment, Different Yes §3). */
export interface ReadoutComparison extends CellKey {
  readonly readout_a: Readout;
  readonly readout_b: Readout;
  readonly n_common: number;
  /** Story-level Pearson r; null below the minimum number of common stories or without variance. */
  readonly r: number | null;
  /** Mean |s_a − s_b| over the common stories; null below the minimum number of common stories. */
  readonly mean_abs_diff: number | null;
}

/** One readout pair over cells (Same Judgment, Different Yes §4, Figure 2a: median over cells and its 10–90 % range). */
export interface ReadoutConvergence {
  readonly readout_a: Readout;
  readonly readout_b: Readout;
  /** Cells with a non-null r. */
  readonly n_cells: number;
  readonly median_r: number | null;
  readonly q10_r: number | null;
  readonly q90_r: number | null;
  readonly median_abs_diff: number | null;
}

export interface EstimateOptions {
  /** Two profiles are compared only on at least this many common stories (seed: 8). */
  readonly minCommonStories?: number;
  /** Readout pairs to compare; default: every pair of readouts present in a cell. */
  readonly readoutPairs?: readonly (readonly [Readout, Readout])[];
}

export interface EstimateResults {
  readonly storyScores: readonly StoryScore[];
  readonly cellHabits: readonly CellHabit[];
  readonly comparisons: readonly ReadoutComparison[];
  readonly convergence: readonly ReadoutConvergence[];
  readonly minCommonStories: number;
}
