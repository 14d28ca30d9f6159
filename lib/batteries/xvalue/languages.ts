import type { Language } from './types.js';

/** How a prompt names the language of a pair and the cultural context it is judged in. */
export interface LanguageContext {
  /** The language's English name (Table 9 "Language"). */
  readonly name: string;
  /** The country or region whose context the prompt names (Table 9 "Country/Region"). */
  readonly region: string;
}

/**
 * Towards Cross-lingual Values Judgment Appendix J, Table 9: "the language codes along with their corresponding languages and
 * countries/regions used for constructing prompts", verbatim.
 */
export const LANGUAGE_CONTEXT: Readonly<Record<Language, LanguageContext>> = {
  ar: { name: 'Arabic', region: 'Arabic-speaking countries' },
  de: { name: 'German', region: 'Germany' },
  en: { name: 'English', region: 'United States' },
  es: { name: 'Spanish', region: 'Spain' },
  fr: { name: 'French', region: 'France' },
  id: { name: 'Indonesian', region: 'Indonesia' },
  ja: { name: 'Japanese', region: 'Japan' },
  ko: { name: 'Korean', region: 'South Korea' },
  pt: { name: 'Portuguese', region: 'Brazil' },
  ru: { name: 'Russian', region: 'Russia' },
  th: { name: 'Thai', region: 'Thailand' },
  ur: { name: 'Urdu', region: 'Pakistan' },
  vi: { name: 'Vietnamese', region: 'Vietnam' },
  zh: { name: 'Chinese', region: 'China' },
};
