/**
 * The FAR-6 design (Same Judgment, Different Yes, §3 and "Answer instructions"): its languages, factors, reading maps
 * and stories, and the PromptItem it expands into.
 */
import type { PromptItem } from '../../api/battery.js';

/** Same Judgment, Different Yes: the six languages the battery renders (templates written per language, not translated). */
export const LANGUAGES = ['en', 'zh', 'de', 'ja', 'ko', 'fr'] as const;
export type Language = (typeof LANGUAGES)[number];

/** Same Judgment, Different Yes §3: plain polar, negative interrogative, alternative ("wrong or right?"), or-not. */
export const QUESTION_FORMS = ['plain', 'negint', 'alternative', 'ornot'] as const;
export type QuestionForm = (typeof QUESTION_FORMS)[number];

/** Same Judgment, Different Yes §3 / "Answer instructions": free sentence, verdict-first, yes/no-first, proposition letter. */
export const ANSWER_CONSTRAINTS = ['free', 'verdict', 'yesno', 'label'] as const;
export type AnswerConstraint = (typeof ANSWER_CONSTRAINTS)[number];

/** Side of the reference proposition P (e.g. "what Finn did was wrong") a reading lands on. */
export type Proposition = 'P' | 'notP';

/** A reading's label: the seed's four-way codebook plus `invalid` (nothing readable). */
export const READING_LABELS = ['P', 'notP', 'both', 'none', 'invalid'] as const;
export type ReadingLabel = (typeof READING_LABELS)[number];

export const STORY_GROUPS = ['acceptable', 'contested', 'violation'] as const;
export type StoryGroup = (typeof STORY_GROUPS)[number];

/**
 * How the fixed token rule reads an item's opening (Same Judgment, Different Yes §3: "the fixed token rule reads yes
 * as affirming the term named in the question and no as its opposite, counting German doch and
 * French si with yes"). `tokens` maps every accepted opening surface form (case-folded) to the
 * proposition it stands for under that rule; the structured fields say which form plays which
 * role, so a simulator or an analysis can tell yes from doch.
 */
export interface ReadingMap {
  readonly kind: 'particle' | 'verdict' | 'letter' | 'none';
  readonly tokens: Readonly<Record<string, Proposition>>;
  /** kind 'particle': the particles offered, in the order the instruction lists them. */
  readonly particles?: {
    readonly yes: string;
    readonly no: string;
    /** German doch, French si: rejects a negative antecedent; read with yes. */
    readonly reverse?: string;
    readonly order: readonly string[];
  };
  /** kind 'letter': letter → proposition, in the order listed in the prompt. */
  readonly letters?: readonly { readonly letter: string; readonly proposition: Proposition }[];
  /** kind 'verdict': the verdict word for each side. */
  readonly verdicts?: { readonly P: string; readonly notP: string };
}

/** FAR-6 design factors, one column each in the prompts table. */
export type Far6Factors = {
  readonly story: string;
  readonly story_group: StoryGroup;
  readonly concept_pair: string;
  readonly form: QuestionForm;
  readonly constraint: AnswerConstraint;
  /**
   * Keying: the proposition whose term the question names (`P` when "wrong?" is asked and P is
   * "what X did was wrong"). For the alternative question, the term listed first.
   */
  readonly named: Proposition;
  /** 0 or 1: which order of the options (letters, particles, alternative terms) was shown. */
  readonly option_order: number;
  /** 0-based repeat index; items with the same prompt_key differ only here. */
  readonly repeat: number;
  /** Wording family, for the negative-interrogative analysis (e.g. `attitude_verb`, `evaluative_adjective`). */
  readonly construction: string;
};

/** What FAR-6's readers and simulator need beyond the factors. */
export interface Far6Extras {
  readonly reading_map: ReadingMap;
  /** The reference proposition and its opposite, as full sentences in the item's language. */
  readonly propositions: { readonly P: string; readonly notP: string };
}

/** A FAR-6 item: generate items and the judge and audit items that read their replies. */
export type Far6Item = PromptItem<Far6Factors, Far6Extras>;

// ---- FAR-6 example data --------------------------------------------------------------------

export interface StoryRendering {
  /** The vignette, one to three sentences. */
  readonly text: string;
  /** The protagonist's name as written in this rendering; templates refer to the act through it. */
  readonly agent: string;
}

export interface Far6Story {
  readonly id: string;
  readonly group: StoryGroup;
  /** At least one language; a language in the campaign without a rendering is an error. */
  readonly renderings: Partial<Record<Language, StoryRendering>>;
}
