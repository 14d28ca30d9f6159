import type { GenerationSettings } from '../../../api/battery.js';
import type { Language, Proposition, ReadingLabel } from '../types.js';

/** What the fixed token rule R read: the label and the (normalised) opening it matched, if any. */
export interface RuleReading {
  readonly label: ReadingLabel;
  /** The case-folded, NFKC-normalised token that decided, or null when nothing in the map matched. */
  readonly raw: string | null;
}

/**
 * The four ways R+ extends R on verdict openings (Same Judgment, Different Yes §3, "extended in four stated ways",
 * Appendix A11). Each can be switched off.
 */
export const PLUS_EXTENSIONS = ['negation', 'hedge', 'variant', 'copula'] as const;
export type PlusExtension = (typeof PLUS_EXTENSIONS)[number];

export interface ReadPlusOptions {
  /**
   * The item's language: only that language's tables are used. Without it the tables of all six
   * languages are merged (safe because their entries rarely collide, but slower to build).
   */
  readonly language?: Language;
  /** Extensions to switch off or on; every one is on unless set to false. */
  readonly extensions?: Partial<Record<PlusExtension, boolean>>;
}

/** What R+ read: as R, plus the spans it consumed and the extensions that were needed. */
export interface PlusReading extends RuleReading {
  /** Extensions that decided this reading; empty when plain R already read it. */
  readonly via: readonly PlusExtension[];
}

/** One matcher entry: a surface form (normalised) and the side it stands for. */
export interface MatchEntry {
  readonly key: string;
  readonly side: Proposition;
  /** Latin-like keys must be followed by a non-letter/digit; CJK, kana and hangul keys need not. */
  readonly boundary: boolean;
}

/** The judge that reads a reply: its campaign model id and generation settings. */
export interface JudgeSpec {
  readonly id: string;
  readonly settings: GenerationSettings;
}

/** The reply being judged: its text and the attempt it came from. */
export interface JudgedReply {
  readonly text: string;
  readonly attempt: number;
}

/** Judge output as parsed: the label and the judge's full raw text. */
export interface JudgeReading {
  readonly label: ReadingLabel;
  readonly raw: string;
}
