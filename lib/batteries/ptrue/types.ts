/**
 * The P(True) battery's vocabulary of types (Disentangling Question, Response, and Verifier Languages §3): base items of parallel multilingual
 * benchmarks, the factors of its prompt items, and its phases' names.
 */
import type { FactorRecord, LanguageCode, PromptItem } from '../../api/battery.js';

/** The six languages of Disentangling Question, Response, and Verifier Languages §3.1, in the paper's order. */
export const PTRUE_LANGUAGES = ['en', 'zh', 'fr', 'ja', 'ko', 'hi'] as const;
export type PtrueLanguage = (typeof PTRUE_LANGUAGES)[number];

/**
 * How a benchmark asks (Disentangling Question, Response, and Verifier Languages §3.1): `multiple_choice` (MMMLU: an option letter and a brief
 * explanation, scored by exact option match) or `short_answer` (LSQA, TriviaQA: a concise free-text
 * answer, scored by the judge). The kind also places the response-language directive (§3.4).
 */
export const BENCHMARK_KINDS = ['multiple_choice', 'short_answer'] as const;
export type BenchmarkKind = (typeof BENCHMARK_KINDS)[number];

/** Option letters, in order: a multiple-choice item has 2–10 options. */
export const OPTION_LETTERS = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J'] as const;

/** One base item of a parallel benchmark, as the items file gives it (data/README in the battery README). */
export interface BaseItem {
  /** Unique in the file; a portable slug (it is a column and part of item identities). */
  readonly id: string;
  /** The benchmark it belongs to (`mmmlu`, `lsqa`, `triviaqa`, or any name). */
  readonly benchmark: string;
  readonly kind: BenchmarkKind;
  /** The question in each language of the file. */
  readonly question: Readonly<Record<LanguageCode, string>>;
  /** Multiple choice: the options in each language, in the same order in every language. */
  readonly options: Readonly<Record<LanguageCode, readonly string[]>> | null;
  /** Multiple choice: the gold option letter. */
  readonly answerLetter: string | null;
  /** Short answer: the reference answer per language (at least one; English is the cross-check). */
  readonly answers: Readonly<Record<LanguageCode, string>>;
  /** Other accepted forms of the answer (TriviaQA: English aliases). */
  readonly aliases: readonly string[];
  /** MMMLU: the subject group (a stratum, not a native language). */
  readonly subject: string | null;
  /** LSQA: the content-language subset the item was written for (the "native" language). */
  readonly contentLanguage: LanguageCode | null;
}

/** The stratum of an item for the decompositions (§5): the LSQA content subset or the MMMLU subject group. */
export function stratumOf(item: Pick<BaseItem, 'contentLanguage' | 'subject'>): string | null {
  return item.contentLanguage ?? item.subject;
}

/** The phases of the battery. */
export const PHASES = { generate: 'generate', verify: 'verify', judge: 'judge' } as const;

/**
 * Factors of every P(True) prompt item (columns of `ptrue_prompts`). `question_language` is also
 * the partition language. Verify items add `verifier_language` and `label_prefix`; generate and
 * judge items leave them null.
 */
export interface PtrueFactors extends FactorRecord {
  readonly benchmark: string;
  readonly kind: BenchmarkKind;
  readonly base_item: string;
  readonly stratum: string | null;
  readonly content_language: string | null;
  readonly question_language: string;
  readonly response_language: string;
  readonly verifier_language: string | null;
  /** Whether thinking was asked off (`off`) or left at the model's default (`default`): §3.4, recorded. */
  readonly thinking: string;
  /** Verify items: whether a chosen label variant is only the first token of a longer label (App. A). */
  readonly label_prefix: boolean | null;
}

/** What readers and the simulator need beyond the factors. */
export interface PtrueExtras {
  /** Multiple choice: the gold letter and the number of options; short answer: null. */
  readonly gold_letter: string | null;
  readonly option_count: number | null;
  /** The reference in the response language, else English, else the first given (judge and simulator). */
  readonly reference: string | null;
  /** Every reference by language (short answer), and the accepted aliases: the simulated judge grades with them. */
  readonly answers: Readonly<Record<LanguageCode, string>>;
  readonly aliases: readonly string[];
  /** Multiple choice: the options per language (the simulated respondent explains its choice with them). */
  readonly options: Readonly<Record<LanguageCode, readonly string[]>> | null;
  /** Verify items: the label candidates of the probe (surface forms), and those that are label prefixes. */
  readonly labels: { readonly true: readonly string[]; readonly false: readonly string[]; readonly prefix: readonly string[] } | null;
  /** The design's languages (the language identifier chooses among them). */
  readonly languages: readonly LanguageCode[];
}

export type PtrueItem = PromptItem<PtrueFactors, PtrueExtras>;
