/**
 * The realised language of a reply (Disentangling Question, Response, and Verifier Languages §1 "report … realized response language", App. C:
 * "responses … labeled as written in the requested language"), offline. Two steps:
 *
 * 1. The script (script.ts): Hangul → ko, kana → ja, Devanagari → hi, whenever that language is
 *    among the candidates.
 * 2. Between languages that share a script (en/fr in Latin, zh/ja in Han without kana) the
 *    identifier `eld` 2.1.0 (its large n-gram database; Apache-2.0), restricted to those
 *    languages: eld's detector over the part of its database those languages use (eldDetect.ts).
 *
 * Chosen by measured accuracy (bench/ptrue/languageId.ts, 180 short answers, 30 per language):
 * eld large 0.961 overall (en 0.97, zh 0.93, fr 0.97, ja 0.90, ko 1.00, hi 1.00); franc-min and
 * franc-all 0.922, lande 0.922 with the script rule (0.717 alone), tinyld 0.872, cld3-asm 0.817.
 * eld's misses there are the answers no identifier can place ("Paris" written in French, "光合成"
 * written in Japanese) and two Han-only words it gives no language for. The script rule changes
 * nothing for eld on that set; it is kept because it makes the three unambiguous scripts exact
 * whatever the identifier's database.
 *
 * A text with no letters (a bare number) is `und`, as is one eld cannot place.
 */
import type { LanguageCode } from '../../../api/battery.js';
import { detectAmong } from './eldDetect.js';
import { scriptLanguage } from './script.js';

export { scriptLanguage, scriptCounts } from './script.js';
export type { ScriptVerdict } from './script.js';

/** The label of a reply whose language cannot be told. */
export const UNDETERMINED = 'und';

/** What the identifier said, and how. */
export interface LanguageGuess {
  /** A language of `among`, or `und`. */
  readonly language: LanguageCode;
  /** `script` (settled by the writing system), `eld` (the identifier chose), `none` (und). */
  readonly by: 'script' | 'eld' | 'none';
  /** eld's score of the chosen language (its own scale, higher is surer); null when eld was not asked. */
  readonly score: number | null;
}

/** An identifier that answers synchronously. */
export type IdentifyLanguage = (text: string, among: readonly LanguageCode[]) => LanguageGuess;

const identify: IdentifyLanguage = (text, among) => {
  const verdict = scriptLanguage(text, among);
  if (verdict.decided) return { language: verdict.language, by: 'script', score: null };
  if (verdict.script === null || verdict.among.length === 0) return { language: UNDETERMINED, by: 'none', score: null };
  const found = detectAmong(text, verdict.among);
  if (found === null) return { language: UNDETERMINED, by: 'none', score: null };
  return { language: found.language, by: 'eld', score: found.score };
};

/**
 * The identifier. Its n-gram table is built on the first text the script rule leaves undecided
 * (eldDetect.ts), so a thread that never reads a generate reply never builds it.
 * @example const identify = await prepareLanguageId(); identify('La réponse est Jupiter.', ['en', 'fr']).language // 'fr'
 */
export async function prepareLanguageId(): Promise<IdentifyLanguage> {
  return identify;
}
