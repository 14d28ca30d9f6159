/**
 * The same replies read by two readers (Same Judgment, Different Yes §4 Figure 2b, §7): the rows of
 * reading_agreement.sql, reply-level disagreement and the polarity shares of the
 * negative-interrogative token (agreement.ts).
 */
import type { AnswerConstraint, Proposition, QuestionForm } from '../../types.js';
import type { CellKey } from './vocabulary.js';

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
