/**
 * Result types of the FAR-6 analysis (seed 000 §3, §4, §6 and "Estimation steps").
 *
 * Vocabulary: a *cell* is a model × language; a *readout* is question form × answer constraint ×
 * reader, written `form/constraint/reader` (e.g. `negint/yesno/judge:sonnet`). Readers may contain
 * `/`; forms and constraints never do, so a readout splits at its first two slashes.
 */
import type { AnswerConstraint, Proposition, QuestionForm } from '../design/types.js';
import type { TableName } from '../store/types.js';

/** The minimal database handle the SQL stage needs (DuckDB locally; any engine with the same call). */
export interface Queryable {
  all<T = Record<string, unknown>>(sql: string): Promise<T[]>;
}

/** What each table placeholder becomes: a `(SELECT … read_parquet(…))` subquery or a Glue table name. */
export type TableSources = Readonly<Record<TableName, string>>;

/** `form/constraint/reader`. */
export type Readout = string;

export interface CellKey {
  readonly model: string;
  readonly language: string;
}

/** One row of item_shares.sql (plus `second_listed` from label_maps.sql): one prompt item, one reader. */
export interface ItemShareRow extends CellKey {
  readonly reader: string;
  readonly form: QuestionForm;
  readonly constraint: AnswerConstraint;
  readonly story: string;
  readonly story_group: string;
  readonly concept_pair: string;
  readonly construction: string;
  /** Keying: the proposition whose term the question names. */
  readonly named: Proposition;
  readonly option_order: number;
  readonly prompt_key: string;
  /** Read replies over the item's repeats (one chosen reply per repeat). */
  readonly n_replies: number;
  readonly n_p: number;
  readonly n_notp: number;
  readonly n_both: number;
  readonly n_none: number;
  readonly n_invalid: number;
  /** Label items: the proposition listed second in the prompt; null for other constraints. */
  readonly second_listed: Proposition | null;
}

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

/** Answer habits of one cell under one readout (seed 000 §6). */
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

/** Two readouts of one cell compared on their common stories (seed 000 §3). */
export interface ReadoutComparison extends CellKey {
  readonly readout_a: Readout;
  readonly readout_b: Readout;
  readonly n_common: number;
  /** Story-level Pearson r; null below the minimum number of common stories or without variance. */
  readonly r: number | null;
  /** Mean |s_a − s_b| over the common stories; null below the minimum number of common stories. */
  readonly mean_abs_diff: number | null;
}

/** One readout pair over cells (seed 000 §4, Figure 2a: median over cells and its 10–90 % range). */
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

/** One row of cell_summary.sql. */
export interface CellSummaryRow extends CellKey {
  readonly form: string;
  readonly constraint: string;
  readonly reader: string;
  readonly replies: number;
  readonly decisive: number;
  readonly n_p: number;
  readonly decisive_share: number;
  readonly p_share: number | null;
}

/** One row of reply_totals.sql. */
export interface ReplyTotalsRow extends CellKey {
  readonly attempts: number;
  readonly ok_attempts: number;
  readonly items_ok: number;
  readonly simulated_attempts: number;
  readonly cost_usd: number;
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

export interface AnalysisResults extends EstimateResults {
  readonly cellSummary: readonly CellSummaryRow[];
  readonly replyTotals: readonly ReplyTotalsRow[];
  /** Item rows (prompt item × reader) the estimators read. */
  readonly itemRows: number;
  /** True when any stored attempt came from the simulated provider. */
  readonly simulated: boolean;
}

export interface ReportMeta {
  readonly campaign: string;
  /** Forces the simulated label on (results.simulated also sets it). */
  readonly simulated?: boolean;
  /** ISO time stamp written into summary.md; omitted when absent, so reports can be reproduced. */
  readonly generatedAt?: string;
  /** Where the data came from (a directory, an S3 prefix), for the summary. */
  readonly source?: string;
}
