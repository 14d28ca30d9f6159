/**
 * The name of each of the six languages written in each of them, for the response-language
 * directive ("Answer in Korean" written in French is "Répondez en coréen"). Written for this
 * project; a campaign that adds a language gives its names in its own templates.
 */
import type { PtrueLanguage } from '../types.js';

/** NAMES[in][of]: the name of language `of` written in language `in`. */
export const LANGUAGE_NAMES: Readonly<Record<PtrueLanguage, Readonly<Record<PtrueLanguage, string>>>> = {
  en: { en: 'English', zh: 'Chinese', fr: 'French', ja: 'Japanese', ko: 'Korean', hi: 'Hindi' },
  zh: { en: '英语', zh: '中文', fr: '法语', ja: '日语', ko: '韩语', hi: '印地语' },
  fr: { en: 'anglais', zh: 'chinois', fr: 'français', ja: 'japonais', ko: 'coréen', hi: 'hindi' },
  ja: { en: '英語', zh: '中国語', fr: 'フランス語', ja: '日本語', ko: '韓国語', hi: 'ヒンディー語' },
  ko: { en: '영어', zh: '중국어', fr: '프랑스어', ja: '일본어', ko: '한국어', hi: '힌디어' },
  hi: { en: 'अंग्रेज़ी', zh: 'चीनी', fr: 'फ़्रेंच', ja: 'जापानी', ko: 'कोरियाई', hi: 'हिन्दी' },
};

/** The name of `of` written in `inLanguage`, or null when the table has no such pair. */
export function languageName(inLanguage: string, of: string): string | null {
  const row = (LANGUAGE_NAMES as Readonly<Record<string, Readonly<Record<string, string>>>>)[inLanguage];
  return row?.[of] ?? null;
}
