/**
 * The rows of the SQL stage that the estimators and the summary read: item shares (one prompt item,
 * one reader), the printed cell overview and the reply totals (Same Judgment, Different Yes §3 and
 * "Estimation steps").
 */
import type { AnswerConstraint, Proposition, QuestionForm } from '../../types.js';
import type { CellKey } from './vocabulary.js';

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
