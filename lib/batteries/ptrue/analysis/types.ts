/**
 * The item-level rows every P(True) estimator reads (Disentangling Question, Response, and Verifier Languages §5): one row per model × base item ×
 * question language × response language × verifier language, with the reply's correctness (shared
 * by its verifier copies) and the verifier copy's P(True). The SQL stage (sql/ptrue_rows.sql), the
 * simulator test and bring-your-own rows all produce this shape.
 */
import type { LanguageCode } from '../../../api/battery.js';

export interface PtrueRow {
  readonly model: string;
  readonly benchmark: string;
  readonly base_item: string;
  /** LSQA content subset or MMMLU subject group; null when the benchmark has none (TriviaQA). */
  readonly stratum: string | null;
  /** The item's content language (LSQA), for the native-alignment views; null otherwise. */
  readonly content_language: LanguageCode | null;
  readonly q: LanguageCode;
  readonly r: LanguageCode;
  readonly v: LanguageCode;
  /** Correctness of the generate reply (option match or judge 4–5); flagged readings count false. */
  readonly correct: boolean;
  /** P(True) of this verifier copy; null when the probe reading is invalid. */
  readonly p_true: number | null;
  /** Whether correctness rests on a flagged reading (unextractable option, malformed judge output). */
  readonly flagged?: boolean;
  /** The realised language of the reply (`und` when unknown); null when not identified. */
  readonly realised?: LanguageCode | null;
  /** Whether P(True) is exact (false: it rests on a top-k bound); null when unknown. */
  readonly exact?: boolean | null;
  /** An alternative correctness (the judge on multiple choice, §6.2), when there is one. */
  readonly correct_alt?: boolean | null;
}

/** The metrics of one group of rows (a configuration cell, a regime, an axis level). */
export interface MetricSet {
  readonly n: number;
  /** Rows whose P(True) was invalid (left out of the confidence metrics). */
  readonly invalid: number;
  readonly accuracy: number | null;
  readonly meanConfidence: number | null;
  readonly brier: number | null;
  readonly ece: number | null;
  readonly auroc: number | null;
}

/** A configuration cell (§5): one model × benchmark × q × r × v. */
export interface CellMetrics extends MetricSet {
  readonly benchmark: string;
  readonly model: string;
  readonly q: LanguageCode;
  readonly r: LanguageCode;
  readonly v: LanguageCode;
}

/** The metric names the tables report, and whether higher is better. */
export const METRICS = ['accuracy', 'brier', 'ece', 'auroc'] as const;
export type MetricName = (typeof METRICS)[number];
export const HIGHER_IS_BETTER: Readonly<Record<MetricName, boolean>> = { accuracy: true, brier: false, ece: false, auroc: true };
