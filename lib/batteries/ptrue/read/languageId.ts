/**
 * The realised language of a reply (Disentangling Question, Response, and Verifier Languages §1 "report … realized response language", App. C:
 * "responses … labeled as written in the requested language"), offline. Two steps:
 *
 * 1. The script (script.ts): Hangul → ko, kana → ja, Devanagari → hi, whenever that language is
 *    among the candidates.
 * 2. Between languages that share a script (en/fr in Latin, zh/ja in Han without kana) the
 *    identifier `eld` 2.1.0 (its large n-gram database, bundled in the package; Apache-2.0),
 *    restricted to those languages.
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

interface Eld {
  detect(text: string): { language: string; getScores(): Record<string, number> };
  setLanguageSubset(languages: string[] | boolean): unknown;
  newInstance(): Eld;
}

let eldInstance: Promise<Eld> | undefined;

// eld keeps its language subset in the instance: one private instance, its subset set per call.
// Loaded on first use (about a second, 160 MB of n-grams), so a campaign that never reads a
// generate reply never pays for it.
function loadEld(): Promise<Eld> {
  eldInstance ??= import('eld/large').then((m) => (m.eld as unknown as Eld).newInstance());
  return eldInstance;
}

/** An identifier that answers synchronously, once eld is loaded. */
export type IdentifyLanguage = (text: string, among: readonly LanguageCode[]) => LanguageGuess;

function identifyWith(eld: Eld): IdentifyLanguage {
  return (text, among) => {
    const verdict = scriptLanguage(text, among);
    if (verdict.decided) return { language: verdict.language, by: 'script', score: null };
    if (verdict.script === null || verdict.among.length === 0) return { language: UNDETERMINED, by: 'none', score: null };
    eld.setLanguageSubset([...verdict.among]);
    const result = eld.detect(text);
    if (!verdict.among.includes(result.language)) return { language: UNDETERMINED, by: 'none', score: null };
    return { language: result.language, by: 'eld', score: result.getScores()[result.language] ?? null };
  };
}

/**
 * Loads the identifier (once per process) and returns it; readers are synchronous, so a phase
 * that reads languages awaits this before it reads.
 * @example const identify = await prepareLanguageId(); identify('La réponse est Jupiter.', ['en', 'fr']).language // 'fr'
 */
export async function prepareLanguageId(): Promise<IdentifyLanguage> {
  return identifyWith(await loadEld());
}
