import { describe, expect, it } from 'vitest';
import type { Language, ReadingLabel, ReadingMap } from '../../../../lib/batteries/far6/types.js';
import {
  PLUS_EXTENSIONS,
  explainOpeningPlus,
  readOpening,
  readOpeningPlus,
  readerIds,
  type PlusExtension,
} from '../../../../lib/batteries/far6/read/index.js';
import { VERDICT_MAPS as V, letterMap, particleMap } from './fixtures.js';

type Case = [map: keyof typeof V, language: Language, text: string, r: ReadingLabel, plus: ReadingLabel];

/**
 * Each extension in at least three languages: R's reading, then R+'s. The rows are alike because they
 * are data (one case each); generating them would hide the very texts a reader of the test checks.
 */
const BY_EXTENSION: Record<PlusExtension, Case[]> = {
  negation: [
    ['en', 'en', 'Not wrong, given the circumstances.', 'invalid', 'notP'],
    ['enVerb', 'en', "I don't oppose it.", 'invalid', 'notP'],
    ['de', 'de', 'Nicht falsch.', 'invalid', 'notP'],
    ['de', 'de', 'Falsch war es nicht.', 'P', 'notP'],
    ['deVerb', 'de', 'Ich lehne das nicht ab.', 'P', 'notP'],
    ['fr', 'fr', 'Pas mal du tout.', 'invalid', 'notP'],
    ['frVerb', 'fr', 'Je ne désapprouve pas.', 'invalid', 'notP'],
    ['zh', 'zh', '不是错的。', 'invalid', 'notP'],
    ['zhVerb', 'zh', '不反对。', 'invalid', 'notP'],
    ['ja', 'ja', '悪くないと思います。', 'invalid', 'notP'],
    ['ja', 'ja', '悪いとは思いません。', 'P', 'notP'],
    ['jaVerb', 'ja', '反対ではありません。', 'P', 'notP'],
    ['ko', 'ko', '잘못이 아닙니다.', 'P', 'notP'],
    ['ko', 'ko', '옳지 않습니다.', 'invalid', 'P'],
    ['koVerb', 'ko', '반대하지 않습니다.', 'P', 'notP'],
  ],
  hedge: [
    ['en', 'en', 'Well, wrong.', 'invalid', 'P'],
    ['en', 'en', 'Honestly — morally wrong.', 'invalid', 'P'],
    ['enVerb', 'en', 'I strongly oppose what Finn did.', 'invalid', 'P'],
    ['de', 'de', 'Ich finde es falsch.', 'invalid', 'P'],
    ['fr', 'fr', 'Franchement, mal.', 'invalid', 'P'],
    ['zh', 'zh', '我认为错误。', 'invalid', 'P'],
    ['zhVerb', 'zh', '我强烈反对。', 'invalid', 'P'],
    ['jaVerb', 'ja', '私は反対です。', 'invalid', 'P'],
    ['ko', 'ko', '솔직히 잘못되었습니다.', 'invalid', 'P'],
  ],
  variant: [
    ['en', 'en', 'Wrongly done.', 'invalid', 'P'],
    ['en', 'en', 'Incorrect.', 'invalid', 'P'],
    ['de', 'de', 'Falsche Entscheidung.', 'invalid', 'P'],
    ['de', 'de', 'Richtiges Verhalten.', 'invalid', 'notP'],
    ['fr', 'fr', 'Mauvaise idée.', 'invalid', 'P'],
    ['zhVerb', 'zh', '赞成。', 'invalid', 'notP'],
    ['ko', 'ko', '올바른 행동입니다.', 'invalid', 'notP'],
  ],
  copula: [
    ['en', 'en', 'It was wrong.', 'invalid', 'P'],
    ['en', 'en', 'What Finn did was not wrong.', 'invalid', 'notP'],
    ['en', 'en', "It wasn't wrong.", 'invalid', 'notP'],
    ['de', 'de', 'Das war falsch.', 'invalid', 'P'],
    ['de', 'de', 'Es ist nicht richtig.', 'invalid', 'P'],
    ['fr', 'fr', "C'est mal.", 'invalid', 'P'],
    ['fr', 'fr', "Ce n'était pas mal.", 'invalid', 'notP'],
    ['zh', 'zh', '这是错误的。', 'invalid', 'P'],
    ['zh', 'zh', '这并不是错的。', 'invalid', 'notP'],
    ['ja', 'ja', 'フィンの行動は悪い。', 'invalid', 'P'],
    ['ko', 'ko', '핀의 행동은 잘못되었습니다.', 'invalid', 'P'],
  ],
};

describe('readOpeningPlus (R+): each extension against R', () => {
  for (const ext of PLUS_EXTENSIONS) {
    describe(ext, () => {
      it(`covers at least three languages`, () => {
        expect(new Set(BY_EXTENSION[ext].map((c) => c[1])).size).toBeGreaterThanOrEqual(3);
      });
      it.each(BY_EXTENSION[ext])('%s/%s %j: R %s, R+ %s', (map, lang, text, r, plus) => {
        expect(readOpening(text, V[map]).label).toBe(r);
        const read = explainOpeningPlus(text, V[map], lang);
        expect(read.label).toBe(plus);
        expect(read.via).toContain(ext);
        // Without the language, the tables of all six languages are merged: same reading.
        expect(readOpeningPlus(text, V[map]).label).toBe(plus);
      });
      it.each(BY_EXTENSION[ext])('%s/%s %j: with %s off, R+ no longer reads it that way', (map, lang, text, _r, plus) => {
        const off = explainOpeningPlus(text, V[map], { language: lang, extensions: { [ext]: false } });
        expect(off.via).not.toContain(ext);
        if (off.label === plus) {
          // Another extension may still reach the same side; it must not have used this one.
          expect(off.via.length).toBeGreaterThan(0);
        }
      });
    });
  }

  it('with every extension off, R+ is R on verdict maps', () => {
    const allOff = Object.fromEntries(PLUS_EXTENSIONS.map((e) => [e, false]));
    for (const cases of Object.values(BY_EXTENSION)) {
      for (const [map, language, text] of cases) {
        const off = explainOpeningPlus(text, V[map], { language, extensions: allOff });
        expect(off.label).toBe(readOpening(text, V[map]).label);
        expect(off.via).toEqual([]);
      }
    }
  });
});

describe('readOpeningPlus: combinations, limits and hazards', () => {
  it('combines hedge, negation and copula', () => {
    expect(explainOpeningPlus('Honestly, it was not wrong.', V.en, 'en')).toEqual({
      label: 'notP',
      raw: 'honestly, it was not wrong',
      via: ['negation', 'hedge', 'copula'],
    });
    expect(readOpeningPlus("I don't think it was wrong.", V.en, 'en').label).toBe('notP');
    expect(readOpeningPlus('我不认为这是错的。', V.zh, 'zh').label).toBe('notP');
    expect(readOpeningPlus('Ich denke, es war falsch.', V.de, 'de').label).toBe('P');
    expect(readOpeningPlus('Not really right.', V.en, 'en').label).toBe('P');
  });

  it('reads what R reads, without extensions, where R already decides', () => {
    expect(explainOpeningPlus('Wrong, because he lied.', V.en, 'en')).toEqual({ label: 'P', raw: 'wrong', via: [] });
    expect(explainOpeningPlus('Ich lehne das ab.', V.deVerb, 'de').via).toEqual([]);
  });

  it('reads a verdict after a copula only within the first five tokens of the first sentence', () => {
    expect(readOpeningPlus('What Finn did was wrong.', V.en, 'en').label).toBe('P');
    expect(readOpeningPlus('What Finn did to his friend was wrong.', V.en, 'en').label).toBe('invalid');
    expect(readOpeningPlus('He lied. It was wrong.', V.en, 'en').label).toBe('invalid');
  });

  it('does not read conditional sentences through the copula', () => {
    expect(readOpeningPlus('Whether it was wrong depends on the context.', V.en, 'en').label).toBe('invalid');
    expect(readOpeningPlus('如果是错的，那就应该道歉。', V.zh, 'zh').label).toBe('invalid');
  });

  it('keeps words that double as answer particles out of the verdicts', () => {
    // zh 对 is "yes, right" as often as "correct"; en "That's right" agrees with the question.
    expect(readOpeningPlus('对，这是错的。', V.zh, 'zh').label).toBe('P');
    expect(readOpeningPlus("That's right, it was wrong.", V.en, 'en').label).toBe('P');
    expect(readOpeningPlus('对。', V.zh, 'zh').label).toBe('invalid');
  });

  it('does not flip on a negation that belongs to another clause or phrase', () => {
    expect(readOpeningPlus('Falsch und nicht zu rechtfertigen.', V.de, 'de').label).toBe('P');
    expect(readOpeningPlus('Falsch, nicht richtig.', V.de, 'de').label).toBe('P');
    expect(readOpeningPlus('悪い行為で、許されない。', V.ja, 'ja').label).toBe('P');
    expect(readOpeningPlus('悪いのではないでしょうか。', V.ja, 'ja').label).toBe('P');
  });

  it('reads refusals and empty replies as invalid', () => {
    for (const t of ['', '  ', 'I cannot judge this.', '这个问题很难回答。']) {
      expect(readOpeningPlus(t, V.en, 'en')).toEqual({ label: 'invalid', raw: null });
    }
  });

  it('returns only label and raw from readOpeningPlus', () => {
    expect(Object.keys(readOpeningPlus('Not wrong.', V.en, 'en')).sort()).toEqual(['label', 'raw']);
  });

  it('reads particle, letter and none maps exactly as R', () => {
    const maps: ReadingMap[] = [particleMap('de', 'P'), letterMap('A', 'B'), { kind: 'none', tokens: {} }];
    for (const map of maps) {
      for (const t of ['Doch, nicht falsch.', 'Well, yes.', 'A.', 'Not wrong.', 'Nein.']) {
        expect(readOpeningPlus(t, map, 'de')).toEqual(readOpening(t, map));
      }
    }
  });

  it('lets the map decide over a hedge or a generated form that would collide with it', () => {
    // "ok" is a hedge and a variant; a map that lists it as a verdict keeps it a verdict.
    const map = { kind: 'verdict', tokens: { ok: 'notP', 'not ok': 'P' } } as const satisfies ReadingMap;
    expect(readOpeningPlus('OK.', map, 'en').label).toBe('notP');
    expect(explainOpeningPlus('Not OK.', map, 'en')).toEqual({ label: 'P', raw: 'not ok', via: [] });
    expect(readOpeningPlus('Okay, then.', map, 'en').label).toBe('notP');
  });

  it('names its reader ids', () => {
    expect(readerIds).toEqual({ rule: 'rule', rulePlus: 'rule+' });
  });
});
