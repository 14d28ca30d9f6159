/**
 * The judge audit (Same Judgment, Different Yes "Sentence judging", Table 7): the rows of
 * judge_audit.sql and the agreement of a second judge and of a retest with the primary judge
 * (judgeAudit.ts).
 */
import type { AnswerConstraint, QuestionForm } from '../../types.js';
import type { CellKey } from './vocabulary.js';

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
