/**
 * Answer habits across cells (Same Judgment, Different Yes §6, Figure 4): the variance of each
 * habit matrix, model means and the sign of b under negation (habits.ts).
 */
import type { CellKey, Readout } from './vocabulary.js';

/** A cell-habit matrix (models × languages) split into model, language and interaction variance (Same Judgment, Different Yes §6). */
export interface HabitVariance {
  readonly readout: Readout;
  readonly habit: 'keying_bias' | 'second_listed_pref';
  readonly n_models: number;
  readonly n_languages: number;
  /** Cells left out to make the matrix complete (listed `model/language`, `;`-joined). */
  readonly dropped: string;
  readonly grand_mean: number | null;
  /** Sums of squares around the grand mean, as shares of the total; null without variance or below 2 × 2. */
  readonly model_share: number | null;
  readonly language_share: number | null;
  readonly interaction_share: number | null;
}

/** The sign of b in one cell under two readouts (Same Judgment, Different Yes §6: plain vs negative-interrogative token). */
export interface SignChange extends CellKey {
  readonly readout_a: Readout;
  readonly readout_b: Readout;
  readonly b_a: number;
  readonly b_b: number;
  /** True when both are nonzero with opposite signs; null when either is exactly zero. */
  readonly changed: boolean | null;
}

export interface SignChangeCount {
  readonly readout_a: Readout;
  readonly readout_b: Readout;
  readonly n_cells: number;
  readonly n_changed: number;
  /** Cells where either b is exactly zero (no sign). */
  readonly n_zero: number;
}

export interface HabitResults {
  readonly variance: readonly HabitVariance[];
  /** Model means over languages per readout and habit (Figure 4); optional as `models` above. */
  readonly modelMeans?: readonly HabitModelMean[];
  readonly signChanges: readonly SignChange[];
  readonly signChangeCounts: readonly SignChangeCount[];
}

/** A habit's model mean over languages under one readout (Same Judgment, Different Yes Figure 4 markers and ticks). */
export interface HabitModelMean {
  readonly readout: Readout;
  readonly habit: 'keying_bias' | 'second_listed_pref' | 'named_term_pull';
  readonly model: string;
  readonly n_languages: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}
