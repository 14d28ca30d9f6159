/**
 * FAR-6 concept pairs and the per-language question templates (Same Judgment, Different Yes §3, Appendix A8
 * "language-specific concept pairs", "Construction choices", "Answer instructions").
 */
import type { Language } from '../types.js';

/**
 * Wording families of a concept pair. Same Judgment, Different Yes Figure 5c groups the negative-interrogative
 * wordings into corresponding constructions across languages; the battery carries the two that
 * every language can express with a pair of opposing terms: a negated evaluative adjective
 * ("Wasn't what Finn did wrong?") and a negated attitude verb ("Do you not oppose …?").
 */
export const CONSTRUCTIONS = ['evaluative_adjective', 'attitude_verb'] as const;
export type Construction = (typeof CONSTRUCTIONS)[number];

/** The word forms one side of a pair needs; which keys depends on the language and construction. */
export type TermForms = Readonly<Record<string, string>>;

export interface ConceptTerm {
  /** The verdict word a verdict-first reply opens with for this side (e.g. `wrong`, `反対`). */
  readonly verdict: string;
  /** Further openings read as this side: inflections, the first-person form (`i oppose`). */
  readonly verdict_forms: readonly string[];
  /** Word forms the language's templates for this construction use (see `languages/<lang>.ts`). */
  readonly forms: TermForms;
}

/**
 * Two opposing evaluations of a story's act in one language. `reference` is the negative side
 * (wrong, oppose): the reference proposition P is built from it, notP from `counterpart`.
 */
export interface ConceptPair {
  /** `<language>.<name>`, e.g. `en.wrong-right`. */
  readonly id: string;
  readonly language: Language;
  readonly construction: Construction;
  readonly reference: ConceptTerm;
  readonly counterpart: ConceptTerm;
}

/** Questions and propositions of one construction in one language, written for that language. */
export interface ConstructionTemplates {
  /** Form keys every term must carry, non-empty. */
  readonly forms: readonly string[];
  /** Form keys a term may carry, possibly empty (German separable prefix `ab`); default ''. */
  readonly optionalForms?: readonly string[];
  /** Plain polar question naming `term`. */
  readonly plain: (term: TermForms, agent: string) => string;
  /** Negative interrogative naming `term` inside the negation. */
  readonly negint: (term: TermForms, agent: string) => string;
  /** Or-not question naming `term`. */
  readonly ornot: (term: TermForms, agent: string) => string;
  /** Alternative question listing `first`, then `second`. */
  readonly alternative: (first: TermForms, second: TermForms, agent: string) => string;
  /** The full declarative sentence asserting `term` of the act ("What Finn did was wrong."). */
  readonly proposition: (term: TermForms, agent: string) => string;
}

/** Yes/no particles of a language, with the variants the fixed rule also accepts. */
export interface LanguageParticles {
  readonly yes: string;
  readonly no: string;
  /** German doch, French si: rejects a negative antecedent; read with yes (Same Judgment, Different Yes §3). */
  readonly reverse?: string;
  readonly yesVariants: readonly string[];
  readonly noVariants: readonly string[];
}

export interface LanguageTemplates {
  readonly language: Language;
  readonly constructions: Readonly<Record<Construction, ConstructionTemplates>>;
  readonly particles: LanguageParticles;
  readonly instructions: {
    readonly free: string;
    readonly verdict: string;
    /** The yes/no-first instruction listing the particles in `order`. */
    readonly yesno: (order: readonly string[]) => string;
    readonly label: string;
  };
  /** One proposition-label option line, e.g. `A: What Finn did was wrong.` */
  readonly optionLine: (letter: string, proposition: string) => string;
}
