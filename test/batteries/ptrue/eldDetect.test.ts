import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { SHORT_ANSWERS } from '../../../bench/ptrue/shortAnswers.js';
import { detectAmong } from '../../../lib/batteries/ptrue/read/eldDetect.js';
import { prepareLanguageId, scriptLanguage } from '../../../lib/batteries/ptrue/read/languageId.js';
import type { LanguageGuess } from '../../../lib/batteries/ptrue/read/languageId.js';
import { sharedScriptLanguages } from '../../../lib/batteries/ptrue/read/script.js';
import { eldNgramsSource } from '../../../scripts/eld-ngrams.js';

interface Eld {
  detect(text: string): { language: string; getScores(): Record<string, number> };
  setLanguageSubset(languages: string[] | boolean): unknown;
  info(): { Languages: Record<string, string> };
}

/** eld itself, with its whole large database: what the subset must answer like. */
async function eldLarge(): Promise<Eld> {
  return ((await import('eld/large')).eld as unknown as { newInstance(): Eld }).newInstance();
}

/** The identifier as it was when it asked eld itself. */
function identifyWithEld(eld: Eld, text: string, among: readonly string[]): LanguageGuess {
  const verdict = scriptLanguage(text, among);
  if (verdict.decided) return { language: verdict.language, by: 'script', score: null };
  if (verdict.script === null || verdict.among.length === 0) return { language: 'und', by: 'none', score: null };
  eld.setLanguageSubset([...verdict.among]);
  const result = eld.detect(text);
  if (!verdict.among.includes(result.language)) return { language: 'und', by: 'none', score: null };
  return { language: result.language, by: 'eld', score: result.getScores()[result.language] ?? null };
}

/** Seeded texts made of the short answers' words, mixed across languages and scripts, short and long. */
function mixedTexts(count: number): string[] {
  const words = Object.values(SHORT_ANSWERS)
    .flat()
    .flatMap((a) => a.split(/\s+/));
  const extra = ["l'été", 'aujourd’hui', 'Straße', 'ÇA', 'niño', 'ação', 'Tiếng Việt', 'مرحبا', 'اردو', '😀', '𠀀字', '1969', '—', 'don`t'];
  const pool = [...words, ...extra];
  let seed = 12345;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, (_, i) => {
    const n = i % 50 === 0 ? 400 : 1 + Math.floor(next() * 12);
    return Array.from({ length: n }, () => pool[Math.floor(next() * pool.length)]).join(next() < 0.8 ? ' ' : '');
  });
}

const CORPUS = [...Object.values(SHORT_ANSWERS).flat(), ...mixedTexts(1500), '', '   ', '123 456', 'a', 'ab', 'abc', 'x'.repeat(2000)];
const AMONG: readonly (readonly string[])[] = [['en', 'fr'], ['zh', 'ja'], ['en', 'fr', 'de', 'es', 'pt', 'vi', 'id'], ['ar', 'ur'], ['fr'], ['id', 'de']];

describe("eld's detector over the languages P(True) asks it about", () => {
  it('is generated from the eld installed (run scripts/eld-ngrams.ts after upgrading eld)', async () => {
    const committed = async (file: string) => readFile(new URL(`../../../lib/batteries/ptrue/read/${file}`, import.meta.url), 'utf8');
    const { ts, json } = await eldNgramsSource();
    expect((await committed('eldNgrams.ts')) === ts, 'eldNgrams.ts').toBe(true);
    expect((await committed('eldNgrams.json')) === json, 'eldNgrams.json').toBe(true);
  });

  it('keeps every language eld knows that the script rule can leave undecided', async () => {
    const eld = await eldLarge();
    const known = new Set(Object.values(eld.info().Languages));
    const { ELD_LANGUAGES } = await import('../../../lib/batteries/ptrue/read/eldNgrams.js');
    expect(Object.values(ELD_LANGUAGES).sort()).toEqual(sharedScriptLanguages().filter((l) => known.has(l)).sort());
  });

  it("answers eld's language and score on every text and subset", async () => {
    const eld = await eldLarge();
    for (const among of AMONG) {
      eld.setLanguageSubset([...among]);
      for (const text of CORPUS) {
        const result = eld.detect(text);
        const expected = among.includes(result.language) ? { language: result.language, score: result.getScores()[result.language] } : null;
        expect({ text, among, found: detectAmong(text, among) }).toEqual({ text, among, found: expected });
      }
    }
  });

  it('identifies as the identifier did with eld itself, on the six languages of the paper', async () => {
    const eld = await eldLarge();
    const identify = await prepareLanguageId();
    const six = ['en', 'zh', 'fr', 'ja', 'ko', 'hi'];
    let byEld = 0;
    for (const text of CORPUS) {
      const guess = identify(text, six);
      if (guess.by === 'eld') byEld++;
      expect({ text, guess }).toEqual({ text, guess: identifyWithEld(eld, text, six) });
    }
    // The comparison reaches the detector, not only the script rule.
    expect(byEld).toBeGreaterThan(500);
  });
});
