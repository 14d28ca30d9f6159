import { describe, expect, it } from 'vitest';
import { loadStories } from '../../../../lib/batteries/far6/design/loadStories.js';
import { LANGUAGES, STORY_GROUPS } from '../../../../lib/batteries/far6/types.js';
import type { Language } from '../../../../lib/batteries/far6/types.js';

const EXAMPLE = 'examples/far6/stories.yaml';

// Independent of the loader's own script screen, so a bug there cannot hide a bad rendering.
const HAN = /\p{Script=Han}/u;
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HANGUL = /\p{Script=Hangul}/u;
const LATIN = /\p{Script=Latin}/u;

function inItsScript(language: Language, text: string): boolean {
  switch (language) {
    case 'zh':
      return HAN.test(text) && !KANA.test(text) && !HANGUL.test(text);
    case 'ja':
      return KANA.test(text) && !HANGUL.test(text);
    case 'ko':
      return HANGUL.test(text) && !KANA.test(text) && !HAN.test(text);
    default:
      return LATIN.test(text) && !HAN.test(text) && !KANA.test(text) && !HANGUL.test(text);
  }
}

// The act is stated without an evaluative word (the question carries the evaluation, Same Judgment, Different Yes §3).
const EVALUATIVE: Partial<Record<Language, RegExp>> = {
  en: /\b(wrong|right|bad|good|cruel|kind|nice|mean|unfair|fair|selfish|generous|honest|dishonest|rude|stole|stolen|steal|lied|lie|cheated|cheat)\b/i,
  de: /\b(falsch|richtig|schlecht|gut|grausam|nett|gemein|unfair|fair|egoistisch|ehrlich|unehrlich|stahl|gestohlen|log|gelogen|betrog|betrogen)\b/i,
  fr: /(?<![\p{L}])(mal|bien|mauvais|bon|bonne|cruel|gentil|injuste|juste|égoïste|honnête|malhonnête|volé|vola|menti|triché)(?![\p{L}])/iu,
};

describe('examples/far6/stories.yaml', () => {
  it('loads for all six languages with at least 12 stories and every group represented', async () => {
    const stories = await loadStories(EXAMPLE, LANGUAGES);

    expect(stories.length).toBeGreaterThanOrEqual(12);
    for (const group of STORY_GROUPS) {
      expect(stories.filter((s) => s.group === group).length, group).toBeGreaterThanOrEqual(4);
    }
    expect(new Set(stories.map((s) => s.id)).size).toBe(stories.length);
  });

  it('has a rendering in every language whose text contains its agent and is in its script', async () => {
    const stories = await loadStories(EXAMPLE, LANGUAGES);

    for (const story of stories) {
      for (const language of LANGUAGES) {
        const r = story.renderings[language];
        expect(r, `${story.id}.${language}`).toBeDefined();
        expect(r!.text.includes(r!.agent), `${story.id}.${language} agent ${r!.agent}`).toBe(true);
        expect(inItsScript(language, r!.text), `${story.id}.${language} script`).toBe(true);
      }
    }
  });

  it('keeps each rendering to one or two sentences without an evaluative word', async () => {
    const stories = await loadStories(EXAMPLE, LANGUAGES);

    for (const story of stories) {
      for (const language of LANGUAGES) {
        const text = story.renderings[language]!.text;
        const sentences = text.match(/[.!?。！？](?=\s|$)/gu) ?? [];
        expect(sentences.length, `${story.id}.${language}: ${text}`).toBeGreaterThanOrEqual(1);
        expect(sentences.length, `${story.id}.${language}: ${text}`).toBeLessThanOrEqual(2);
        const evaluative = EVALUATIVE[language];
        if (evaluative) expect(text, `${story.id}.${language}`).not.toMatch(evaluative);
      }
    }
  });

  it('loads for a subset of languages and keeps the file order', async () => {
    const all = await loadStories(EXAMPLE, LANGUAGES);
    const some = await loadStories(EXAMPLE, ['ja', 'fr']);

    expect(some.map((s) => s.id)).toEqual(all.map((s) => s.id));
    expect(some.map((s) => s.group)).toEqual(all.map((s) => s.group));
  });
});
