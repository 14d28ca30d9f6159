/**
 * The writing system of a reply, and what it settles about its language: among the
 * six languages of Disentangling Question, Response, and Verifier Languages, Korean (Hangul), Hindi (Devanagari) and Japanese (kana) are told by
 * their script alone; English and French share Latin, Chinese and Japanese share Han, and only
 * there is a statistical identifier needed (languageId.ts). Measured in bench/ptrue/languageId.ts.
 */
import type { LanguageCode } from '../../../api/battery.js';

/** The script each language is written in, as far as this rule is concerned. */
const SCRIPT_OF: Readonly<Record<string, ScriptName>> = {
  en: 'latin',
  fr: 'latin',
  de: 'latin',
  es: 'latin',
  pt: 'latin',
  id: 'latin',
  vi: 'latin',
  zh: 'han',
  ja: 'han',
  ko: 'hangul',
  hi: 'devanagari',
  ru: 'cyrillic',
  ar: 'arabic',
  ur: 'arabic',
  th: 'thai',
};

type ScriptName = 'latin' | 'han' | 'hangul' | 'devanagari' | 'cyrillic' | 'arabic' | 'thai';

const PATTERNS: readonly (readonly [ScriptName | 'kana', RegExp])[] = [
  ['latin', /\p{Script=Latin}/gu],
  ['han', /\p{Script=Han}/gu],
  ['kana', /[\p{Script=Hiragana}\p{Script=Katakana}]/gu],
  ['hangul', /\p{Script=Hangul}/gu],
  ['devanagari', /\p{Script=Devanagari}/gu],
  ['cyrillic', /\p{Script=Cyrillic}/gu],
  ['arabic', /\p{Script=Arabic}/gu],
  ['thai', /\p{Script=Thai}/gu],
];

/**
 * The languages the script leaves undecided between (they share a script with another language of
 * SCRIPT_OF): the only ones the statistical identifier is ever asked about.
 */
export function sharedScriptLanguages(): string[] {
  const langs = Object.keys(SCRIPT_OF);
  return langs.filter((l) => langs.some((o) => o !== l && SCRIPT_OF[o] === SCRIPT_OF[l]));
}

/** Letters of each script in a text. */
export function scriptCounts(text: string): Readonly<Record<ScriptName | 'kana', number>> {
  const out = { latin: 0, han: 0, kana: 0, hangul: 0, devanagari: 0, cyrillic: 0, arabic: 0, thai: 0 };
  for (const [name, re] of PATTERNS) out[name] = text.match(re)?.length ?? 0;
  return out;
}

/** What the script settles: the language, or the languages still in question. */
export type ScriptVerdict =
  | { readonly decided: true; readonly language: LanguageCode; readonly script: string }
  | { readonly decided: false; readonly among: readonly LanguageCode[]; readonly script: string | null };

/**
 * The language a text's script settles among `among`. The dominant script is the one with the most
 * letters (Han and kana count together, so a Japanese sentence mostly in kanji is still Japanese;
 * an option letter "B." before Korean text does not make it Latin). Kana anywhere in a Han-script
 * text means Japanese. A text with no letters (digits, punctuation) settles nothing.
 * @example scriptLanguage('정답은 목성입니다.', ['en', 'ko']) // { decided: true, language: 'ko', script: 'hangul' }
 */
export function scriptLanguage(text: string, among: readonly LanguageCode[]): ScriptVerdict {
  const c = scriptCounts(text);
  const totals: [ScriptName, number][] = [
    ['latin', c.latin],
    ['han', c.han + c.kana],
    ['hangul', c.hangul],
    ['devanagari', c.devanagari],
    ['cyrillic', c.cyrillic],
    ['arabic', c.arabic],
    ['thai', c.thai],
  ];
  const [script, n] = totals.reduce((best, t) => (t[1] > best[1] ? t : best));
  if (n === 0) return { decided: false, among, script: null };
  const same = among.filter((l) => SCRIPT_OF[l] === script);
  if (script === 'han' && c.kana > 0 && same.includes('ja')) return { decided: true, language: 'ja', script: 'kana' };
  if (same.length === 1) return { decided: true, language: same[0] as LanguageCode, script };
  // Han without kana: Chinese or Japanese; Latin: English or French. A script none of `among` is
  // written in leaves no candidate: the reply is in none of the design's languages.
  return { decided: false, among: same, script };
}
