/**
 * Profiles across cells and model identity (Same Judgment, Different Yes §5, Table 6, Figure 3):
 * cell pairs, nearest neighbours, identity counts beside chance, class means with bootstrap
 * intervals and per-model values (profiles.ts, identity.ts).
 */
import type { CellKey, Readout } from './vocabulary.js';

/** What changes between two cells: the language only, the model only, or both (Same Judgment, Different Yes §5). */
export type PairClass = 'same_model' | 'same_language' | 'both_differ';

/** Two cells compared under one readout on their common stories (Same Judgment, Different Yes §3, §5). */
export interface ProfilePair {
  readonly readout: Readout;
  readonly model_a: string;
  readonly language_a: string;
  readonly model_b: string;
  readonly language_b: string;
  readonly class: PairClass;
  /** Stories where both cells have a score. */
  readonly n_common: number;
  /** Story-level Pearson r of s; null below the minimum of common stories or without variance. */
  readonly r: number | null;
  /** Common stories within both languages' common-model support (where residuals exist). */
  readonly n_common_residual: number;
  /** Residual-profile r (language consensus and cell mean removed); null as for `r`. */
  readonly residual_r: number | null;
  /** Mean |s_a − s_b| over the common stories; null below the minimum. */
  readonly mean_abs_diff: number | null;
}

/** How two cells are compared in the identity analysis. */
export type IdentityMetric = 'residual_r' | 'story_r' | 'mean_abs_diff';

/** The nearest other cell of one cell under one metric (Same Judgment, Different Yes §5, Table 6). */
export interface NearestNeighbour extends CellKey {
  readonly readout: Readout;
  readonly metric: IdentityMetric;
  /** Other cells with a value for this metric. */
  readonly n_candidates: number;
  /** The best value (highest r, lowest mean |Δ|); null without candidates. */
  readonly value: number | null;
  /** The nearest cell(s), `model/language`, joined with `;` when tied. */
  readonly neighbours: string;
  /** Cells tied at the best value (1 without a tie, 0 without candidates). */
  readonly n_tied: number;
  /** Share of the tied nearest cells that are the same model (1 or 0 without a tie); null without candidates. */
  readonly same_model: number | null;
  /** Uniform-random benchmark: same-model candidates / candidates; null without candidates. */
  readonly chance: number | null;
}

/** Cells whose nearest neighbour is the same model in another language, beside chance (Same Judgment, Different Yes Table 6). */
export interface IdentityCount {
  readonly readout: Readout;
  readonly metric: IdentityMetric;
  /** Cells with at least one candidate. */
  readonly n_cells: number;
  /** Σ same_model over cells (a tie counts the same-model share of the tied cells). */
  readonly same_model: number;
  /** Σ chance over cells: the expected count under a uniform random neighbour. */
  readonly expected_random: number;
  /** Cells whose nearest value is tied. */
  readonly n_ties: number;
}

/** A class of cell pairs, or a difference of two classes on the same bootstrap draws. */
export type ClassContrast = PairClass | 'same_model-same_language' | 'same_model-both_differ' | 'same_language-both_differ';

/** Class mean (or difference) with a 95 % story-bootstrap interval (Same Judgment, Different Yes §5, "Estimation steps"). */
export interface ClassEstimate {
  readonly readout: Readout;
  /** `all`, or one story group (the analysis restricted to its stories). */
  readonly story_group: string;
  readonly metric: IdentityMetric;
  readonly contrast: ClassContrast;
  /** Pairs with a value in the point estimate (for a difference: the first class's). */
  readonly n_pairs: number;
  readonly estimate: number | null;
  readonly ci_low: number | null;
  readonly ci_high: number | null;
  /** Draws in which the estimate existed (the interval is over those). */
  readonly n_draws: number;
}

export interface IdentityOptions {
  /** Readouts for the identity analysis; `*` at the end matches a prefix. Default: plain/label/rule, plain/free/judge:*. */
  readonly identityReadouts?: readonly string[];
  /** Story-bootstrap draws (seed: 300). */
  readonly bootstrapDraws?: number;
  /** Seed of the bootstrap stream (fixed by default so that intervals reproduce). */
  readonly bootstrapSeed?: number;
  /** Class means also per story group (default true). */
  readonly byStoryGroup?: boolean;
}

export interface IdentityResults {
  /** Readouts analysed, in order. */
  readonly readouts: readonly Readout[];
  readonly pairs: readonly ProfilePair[];
  readonly neighbours: readonly NearestNeighbour[];
  readonly counts: readonly IdentityCount[];
  /** Per model (Figure 3b); optional so that results built before it still type-check. */
  readonly models?: readonly IdentityModel[];
  readonly classes: readonly ClassEstimate[];
  readonly draws: number;
  readonly seed: number;
}

/** One model under one readout and metric (Same Judgment, Different Yes Figure 3b): its same-model pairs and neighbours. */
export interface IdentityModel {
  readonly readout: Readout;
  readonly metric: IdentityMetric;
  readonly model: string;
  /** The model's cells with a nearest neighbour. */
  readonly n_cells: number;
  /** Of those, cells whose nearest neighbour is the same model (ties credited by share). */
  readonly same_model_nearest: number;
  /** Same-model (language-pair) values: count, mean, lowest, highest. */
  readonly n_pairs: number;
  readonly mean: number | null;
  readonly min: number | null;
  readonly max: number | null;
}
