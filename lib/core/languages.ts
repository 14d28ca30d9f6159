/**
 * What the core knows about a language: its name and how densely its text packs into tokens, for
 * the planning estimates (lib/pricing). Batteries list the languages they render; a code missing
 * here still runs, with the conservative default below.
 */
import type { LanguageCode } from './types.js';

export interface LanguageInfo {
  readonly name: string;
  /**
   * Characters per token outside the dense scripts (Han, kana, Hangul count one token a character
   * anyway). Rounded down from what current tokenizers (o200k, Claude's) give on prose, so that
   * estimates err high: the budget reserves prompt + max_tokens before each call.
   */
  readonly charsPerToken: number;
}

/**
 * The languages of the three studies (Same Judgment, Different Yes: en zh de ja ko fr; Towards Cross-lingual Values Judgment Table 9: ar de en es
 * fr id ja ko pt ru th ur vi zh; Disentangling Question, Response, and Verifier Languages: en zh fr ja ko hi). Latin-script languages with few
 * diacritics pack 3.3–4 characters a token; Cyrillic, Arabic and Vietnamese about 2.5; Devanagari
 * and Urdu about 2; Thai (no spaces, many combining marks) about 1.5.
 */
export const LANGUAGE_INFO: Readonly<Record<LanguageCode, LanguageInfo>> = {
  en: { name: 'English', charsPerToken: 4 },
  de: { name: 'German', charsPerToken: 3.3 },
  fr: { name: 'French', charsPerToken: 3.5 },
  es: { name: 'Spanish', charsPerToken: 3.5 },
  pt: { name: 'Portuguese', charsPerToken: 3.5 },
  id: { name: 'Indonesian', charsPerToken: 3.5 },
  vi: { name: 'Vietnamese', charsPerToken: 2.5 },
  ru: { name: 'Russian', charsPerToken: 2.5 },
  ar: { name: 'Arabic', charsPerToken: 2.5 },
  ur: { name: 'Urdu', charsPerToken: 2 },
  hi: { name: 'Hindi', charsPerToken: 2 },
  th: { name: 'Thai', charsPerToken: 1.5 },
  // Latin letters, digits and spaces inside Chinese, Japanese or Korean text.
  zh: { name: 'Chinese', charsPerToken: 3.5 },
  ja: { name: 'Japanese', charsPerToken: 3.5 },
  ko: { name: 'Korean', charsPerToken: 3.5 },
};

/** Characters per token of a language not in LANGUAGE_INFO: low, so that estimates err high. */
export const DEFAULT_CHARS_PER_TOKEN = 2;

/** A language code as storage paths accept it: `en`, `pt`, `zh-hant`. */
const LANGUAGE_CODE = /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/;

/** Whether `code` is shaped like a language code (lowercase ISO 639 letters, optional subtags). */
export function isLanguageCode(code: string): boolean {
  return LANGUAGE_CODE.test(code);
}

/** Characters per token of a language (LANGUAGE_INFO, else DEFAULT_CHARS_PER_TOKEN). */
export function charsPerToken(language: LanguageCode): number {
  return Object.hasOwn(LANGUAGE_INFO, language) ? LANGUAGE_INFO[language]!.charsPerToken : DEFAULT_CHARS_PER_TOKEN;
}
