/** Prompt templates of the battery (Towards Cross-lingual Values Judgment Appendix J), by prompt id. */
import type { LanguageContext } from '../languages.js';
import type { Language } from '../types.js';

/** Every prompt the battery sends: def-only, step 1, step 2 per nature, step 3 per checkpoint. */
export const PROMPT_IDS = ['defonly', 'step1', 'step2.consensus', 'step2.pluralism', 'step3.E', 'step3.F', 'step3.G', 'step3.H'] as const;
export type PromptId = (typeof PROMPT_IDS)[number];

/** One prompt: an optional system message and the user message, with `{{placeholder}}`s. */
export interface PromptTemplate {
  readonly system?: string;
  readonly user: string;
}

/** The templates a campaign uses: the defaults, with the campaign's overrides applied. */
export interface PromptSet {
  readonly templates: Readonly<Record<PromptId, PromptTemplate>>;
  /** Templates that replace the general one for a single language. */
  readonly byLanguage: Readonly<Partial<Record<Language, Readonly<Partial<Record<PromptId, PromptTemplate>>>>>>;
  /** Table 9: the language name and country/region each prompt names. */
  readonly contexts: Readonly<Record<Language, LanguageContext>>;
}

/** The values a template's placeholders take for one item. */
export interface PromptVars {
  readonly question: string;
  readonly answer: string;
  /** Step 2 only: what step 1 read. */
  readonly core_issue?: string;
  readonly scope?: string;
  readonly nature?: string;
}
