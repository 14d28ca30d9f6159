/**
 * Result types of the FAR-6 analysis (Same Judgment, Different Yes §3, §4, §6 and "Estimation steps").
 *
 * Vocabulary: a *cell* is a model × language; a *readout* is question form × answer constraint ×
 * reader, written `form/constraint/reader` (e.g. `negint/yesno/judge:sonnet`). Readers may contain
 * `/`; forms and constraints never do, so a readout splits at its first two slashes.
 */
import type { AnswerConstraint, Proposition, QuestionForm } from '../types.js';

export type { Queryable, TableSources } from '../../../api/battery.js';

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
  /** Attempts at items the design no longer has (stored, not analysed), and their cost; counted apart from the above. */
  readonly attempts_outside_design?: number;
  readonly cost_outside_design_usd?: number;
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
  /** Profiles across cells and model identity (Same Judgment, Different Yes §5); absent where not computed. */
  readonly identity?: IdentityResults;
  /** Habit variance and sign changes under negation (Same Judgment, Different Yes §6); absent where not computed. */
  readonly habits?: HabitResults;
  /** The same replies read twice: disagreement and polarity shares (Same Judgment, Different Yes §4, §7); absent where not computed. */
  readonly agreement?: AgreementResults;
  /** Residual-profile r between the readouts of each cell (Same Judgment, Different Yes §4); absent where not computed. */
  readonly residualComparisons?: readonly ResidualReadoutComparison[];
  readonly residualConvergence?: readonly ResidualConvergence[];
  /** The same replies read twice with identical weights (Same Judgment, Different Yes §4); absent where not computed. */
  readonly sameReplies?: SameRepliesResults;
  /** Second judge and test–retest on the audit sample (Same Judgment, Different Yes "Sentence judging"); absent without audit readings. */
  readonly judgeAudit?: JudgeAuditResults;
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

/* ---- Part 2: profiles across cells, model identity, habit variance (Same Judgment, Different Yes §4–§6) ---- */

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

/* ---- The same replies read twice (Same Judgment, Different Yes §4 Figure 2b, §7) ---- */

/** One row of reading_agreement.sql: replies of one design cell read decisively by two readers. */
export interface ReadingAgreementRow extends CellKey {
  readonly form: QuestionForm;
  readonly constraint: AnswerConstraint;
  readonly concept_pair: string;
  readonly construction: string;
  readonly named: Proposition;
  /** reader_a < reader_b. */
  readonly reader_a: string;
  readonly reader_b: string;
  readonly n_both_decisive: number;
  readonly n_agree: number;
}

/** Reply-level disagreement of two readers in one cell under one form and constraint (Same Judgment, Different Yes Figure 2b). */
export interface ReplyDisagreement extends CellKey {
  readonly form: QuestionForm;
  readonly constraint: AnswerConstraint;
  readonly reader_a: string;
  readonly reader_b: string;
  readonly n_both_decisive: number;
  readonly n_disagree: number;
  readonly disagreement: number | null;
}

/** Mean over cells of the reply-level disagreement (Same Judgment, Different Yes §4: 3.3 % plain, 31.3 % negative interrogative). */
export interface DisagreementSummary {
  readonly form: QuestionForm;
  readonly constraint: AnswerConstraint;
  readonly reader_a: string;
  readonly reader_b: string;
  /** Cells with at least one reply decisive under both readers. */
  readonly n_cells: number;
  readonly n_both_decisive: number;
  readonly mean_disagreement: number | null;
  readonly min_disagreement: number | null;
  readonly max_disagreement: number | null;
}

/** What a polarity share is grouped by (Same Judgment, Different Yes §7, Figure 5b and 5c). */
export type PolarityLevel = 'model' | 'language' | 'cell' | 'wording' | 'wording_model' | 'construction' | 'construction_model';

/**
 * Polarity share of the negative-interrogative token given its judged sentence (Same Judgment, Different Yes §7): of the
 * replies with a decisive token (rule) and a decisive sentence (judge), the share whose token
 * follows the polarity mapping (yes with the named side), i.e. agrees with the sentence.
 */
export interface PolarityShare {
  readonly level: PolarityLevel;
  /** The sentence reader (a judge). */
  readonly judge: string;
  /** Empty where the level pools over it. */
  readonly model: string;
  readonly language: string;
  /** The construction family (e.g. `evaluative_adjective`); empty where pooled. */
  readonly construction: string;
  /** The wording: concept pair and the term the question negates (`en.wrong-right:P`); empty where pooled. */
  readonly wording: string;
  readonly n_replies: number;
  readonly n_polarity: number;
  /** Pooled over the replies of the group. */
  readonly share: number | null;
  /** Levels without the model: the mean of the models' shares (Same Judgment, Different Yes Figure 5c bars); null elsewhere. */
  readonly model_mean: number | null;
}

export interface AgreementResults {
  readonly disagreement: readonly ReplyDisagreement[];
  readonly disagreementSummary: readonly DisagreementSummary[];
  readonly polarity: readonly PolarityShare[];
}

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

/* ---- The judge audit (Same Judgment, Different Yes "Sentence judging") ---- */

/** One row of judge_audit.sql: an audit reading beside the primary judge's reading of the same reply. */
export interface JudgeAuditPairRow extends CellKey {
  /** `audit-<comparison>`, e.g. `audit-second`, `audit-retest`. */
  readonly phase: string;
  readonly item_id: string;
  readonly constraint: AnswerConstraint;
  readonly form: QuestionForm;
  readonly audit_reader: string;
  readonly audit_label: string;
  readonly primary_reader: string | null;
  readonly primary_label: string | null;
}

/** Pooled over: everything, one language, one answer constraint, one model, or one stratum. */
export type JudgeAuditLevel = 'all' | 'model' | 'language' | 'constraint' | 'stratum';

/** Agreement of two readings of the same replies (Same Judgment, Different Yes Table 7: agreement, kappa, opposite decisive labels). */
export interface AgreementStats {
  /** Replies both readings put in one of the four codebook categories (P, notP, both, none). */
  readonly n: number;
  readonly n_agree: number;
  /** n_agree / n; null when n = 0. */
  readonly agreement: number | null;
  /** Wilson 95 % interval of the agreement; null when n = 0. */
  readonly agreement_low: number | null;
  readonly agreement_high: number | null;
  /** Cohen's kappa over the four categories; null when undefined (see kappa_note). */
  readonly kappa: number | null;
  /** Why kappa is null; empty when it is defined. */
  readonly kappa_note: string;
  /** Replies the primary reading labels P or notP. */
  readonly n_primary_decisive: number;
  /** Replies both readings label P or notP. */
  readonly n_both_decisive: number;
  /** Replies one reading labels P and the other notP: a reversed decisive stance. */
  readonly n_opposite: number;
}

/** One comparison (second judge or retest) pooled at one level. `*` stands for "all" in a pooled key. */
export interface JudgeAuditRow extends AgreementStats {
  /** The phase name without `audit-`: `second`, `retest`. */
  readonly comparison: string;
  readonly primary_reader: string;
  readonly audit_reader: string;
  readonly level: JudgeAuditLevel;
  readonly model: string;
  readonly language: string;
  readonly constraint: string;
  /** Audit readings in the group, labelled or not. */
  readonly n_sampled: number;
  /** Audit readings without a pair of codebook labels (an invalid audit or primary label, or no primary reading). */
  readonly n_unlabeled: number;
}

export interface JudgeAuditResults {
  readonly rows: readonly JudgeAuditRow[];
}
