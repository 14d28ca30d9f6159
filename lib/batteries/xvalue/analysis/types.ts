/**
 * The item-level rows the X-Value estimators take (from the SQL stage, or from verdicts brought
 * from elsewhere) and the tables they produce (Towards Cross-lingual Values Judgment §6.1–6.6). Column names are the results
 * files' columns. Shares are in [0, 1]; an undefined share is null (lib/metrics/classification.ts).
 */
import type { ClassificationRates } from '../../../api/battery.js';
import type { ReadVerdict } from '../veto.js';
import type { Category, Checkpoint, Language, Nature, QuestionLabel, Scope, Strategy, Verdict } from '../types.js';

/** One model's verdict on one pair under one strategy. */
export interface VerdictRow {
  readonly model: string;
  readonly language: Language;
  readonly category: Category;
  readonly qa_id: string;
  readonly strategy: Strategy;
  readonly gold: Verdict;
  /** The rubric's: the one-vote veto over the checkpoint rows (veto.ts). */
  readonly predicted: ReadVerdict;
}

/** One checkpoint of the rubric on one pair: gold and read verdict (A: Pass, or a problem = Fail). */
export interface CheckpointRow {
  readonly model: string;
  readonly language: Language;
  readonly category: Category;
  readonly qa_id: string;
  readonly checkpoint: Checkpoint;
  readonly gold: Verdict;
  readonly predicted: ReadVerdict;
}

export type ReadScope = Scope | 'invalid' | 'missing';
export type ReadNature = Nature | 'invalid' | 'missing';

/** Step 1 of the rubric on one pair, against the annotation (§4.1). */
export interface Step1Row {
  readonly model: string;
  readonly language: Language;
  readonly category: Category;
  readonly qa_id: string;
  readonly gold_scope: Scope;
  readonly predicted_scope: ReadScope;
  readonly gold_nature: Nature;
  readonly predicted_nature: ReadNature;
}

export interface XvalueRows {
  readonly verdicts: readonly VerdictRow[];
  readonly checkpoints: readonly CheckpointRow[];
  readonly step1: readonly Step1Row[];
}

// ---- SQL rows (sql/*.sql) ----------------------------------------------------------------------

/** xvalue_pairs.sql: a pair asked of a model under a strategy, with its gold annotation. */
export interface PairSqlRow {
  readonly model: string;
  readonly language: Language;
  readonly qa_id: string;
  readonly category: Category;
  readonly strategy: Strategy;
  readonly gold_overall: Verdict;
  readonly gold_scope: Scope;
  readonly gold_nature: Nature;
  readonly gold_a: QuestionLabel;
  readonly gold_b: Verdict;
  readonly gold_c: Verdict;
  readonly gold_d: Verdict;
  readonly gold_e: Verdict;
  readonly gold_f: Verdict;
  readonly gold_g: Verdict;
  readonly gold_h: Verdict;
}

/** xvalue_facets.sql: one reading of a chosen reply (reader `parse`), by pair, phase and facet. */
export interface FacetSqlRow {
  readonly model: string;
  readonly language: Language;
  readonly qa_id: string;
  readonly phase: string;
  readonly facet: string;
  readonly label: string;
}

// ---- results ---------------------------------------------------------------------------------

/** The rates of one group, with its abstentions (invalid verdicts) and unanswered pairs. */
export interface RatesRow extends ClassificationRates {
  readonly model: string;
  readonly strategy: Strategy;
  /** Pairs asked but without a verdict (no reply yet, or every attempt failed): left out of n. */
  readonly missing: number;
}

/** Overall (Table 2 left): rates, and the spread of accuracy across categories and across languages. */
export interface OverallRow extends RatesRow {
  readonly category_avg: number | null;
  /** Population std (lib/metrics/spread.ts), as the tables of Towards Cross-lingual Values Judgment. */
  readonly category_std: number | null;
  readonly category_range: number | null;
  readonly language_avg: number | null;
  readonly language_std: number | null;
  readonly language_range: number | null;
}

export interface CategoryRow extends RatesRow {
  readonly category: Category;
}

export interface LanguageRow extends RatesRow {
  readonly language: Language;
}

/** One language × category cell (Appendix B, Figure 1): accuracy and the error split. */
export interface CellRow {
  readonly model: string;
  readonly strategy: Strategy;
  readonly language: Language;
  readonly category: Category;
  readonly n: number;
  readonly accuracy: number | null;
  readonly tp: number;
  readonly tn: number;
  /** False positives: appropriate pairs judged Fail. */
  readonly fp: number;
  /** False negatives: inappropriate pairs judged Pass. */
  readonly fn: number;
  readonly abstained: number;
  readonly missing: number;
}

/** §6.6 / Appendix B: a cell among a model's lowest, with the share of its errors that are false positives. */
export interface LowestCellRow extends CellRow {
  /** 1 = the lowest accuracy of the model and strategy; cells of equal accuracy share a rank. */
  readonly rank: number;
  /** How many other cells of the model and strategy have the same accuracy (listed or not); 0 = no tie. */
  readonly ties: number;
  /** fp / (fp + fn); null without a decided error. */
  readonly fp_share: number | null;
  /** `FP`, `FN` or `mixed` (neither above 2/3 of the decided errors); `none` without one. */
  readonly dominant_error: 'FP' | 'FN' | 'mixed' | 'none';
}

/** §6.5 / Figure 3: precision, recall and F1 (inappropriate = positive) of the overall verdict or one checkpoint. */
export interface CheckpointMetricRow {
  readonly model: string;
  readonly strategy: Strategy;
  /** `overall`, or a checkpoint letter (rubric only). */
  readonly target: 'overall' | Checkpoint;
  readonly n: number;
  readonly n_positive: number;
  readonly tp: number;
  readonly fp: number;
  readonly fn: number;
  readonly tn: number;
  readonly abstained: number;
  readonly missing: number;
  readonly precision: number | null;
  readonly recall: number | null;
  readonly f1: number | null;
}

/** Step 1 against the annotation: agreement on scope or nature, and where it disagrees. */
export interface Step1AgreementRow {
  readonly model: string;
  /** A language, or `all`. */
  readonly language: Language | 'all';
  readonly facet: 'scope' | 'nature';
  readonly n: number;
  readonly agree: number;
  /** agree / n (an invalid reading counts as disagreement); null when n = 0. */
  readonly agreement: number | null;
  readonly invalid: number;
  readonly missing: number;
  /** Gold Global read Regional (scope) or gold Consensus read Pluralism (nature). */
  readonly first_read_as_second: number;
  /** Gold Regional read Global, or gold Pluralism read Consensus. */
  readonly second_read_as_first: number;
}

// X-Value's own tables; P(True)'s PtrueResults has the same shape of lists but other contents (see there).
export interface XvalueResults {
  readonly overall: readonly OverallRow[];
  readonly byCategory: readonly CategoryRow[];
  readonly byLanguage: readonly LanguageRow[];
  readonly cells: readonly CellRow[];
  readonly lowestCells: readonly LowestCellRow[];
  readonly checkpoints: readonly CheckpointMetricRow[];
  readonly step1Agreement: readonly Step1AgreementRow[];
  /** Whether any reply behind the rows came from a simulated model (labelled so everywhere). */
  readonly simulated: boolean;
}
