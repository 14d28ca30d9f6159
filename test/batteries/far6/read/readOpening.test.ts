import { describe, expect, it } from 'vitest';
import type { Language, ReadingLabel, ReadingMap } from '../../../../lib/batteries/far6/types.js';
import { ReadingMapError, readOpening } from '../../../../lib/batteries/far6/read/index.js';
import { PARTICLES, VERDICT_MAPS, letterMap, particleMap } from './fixtures.js';

const LANGS: Language[] = ['en', 'de', 'fr', 'ja', 'ko', 'zh'];

describe('readOpening (rule R): particles in six languages', () => {
  const cases: [Language, string, 'yes' | 'no', string][] = [
    ['en', 'Yes, what Finn did was wrong.', 'yes', 'yes'],
    ['en', 'No. It was fine.', 'no', 'no'],
    ['de', 'Ja, das war falsch.', 'yes', 'ja'],
    ['de', 'Nein, das war in Ordnung.', 'no', 'nein'],
    ['de', 'Doch, das war falsch.', 'yes', 'doch'],
    ['fr', 'Oui, c’était mal.', 'yes', 'oui'],
    ['fr', 'Non, ce n’était pas mal.', 'no', 'non'],
    ['fr', 'Si, c’était mal.', 'yes', 'si'],
    ['ja', 'はい、悪いことでした。', 'yes', 'はい'],
    ['ja', 'いいえ、悪くありません。', 'no', 'いいえ'],
    ['ko', '네, 잘못되었습니다.', 'yes', '네'],
    ['ko', '아니요, 잘못되지 않았습니다.', 'no', '아니요'],
    ['zh', '是的，这是错误的。', 'yes', '是'],
    ['zh', '不，这没有错。', 'no', '不'],
    ['zh', '不是，他没有做错。', 'no', '不是'],
  ];

  it.each(cases)('%s %j reads as %s (raw %s) under both keyings', (lang, text, particle, raw) => {
    for (const named of ['P', 'notP'] as const) {
      const expected = particle === 'yes' ? named : named === 'P' ? 'notP' : 'P';
      expect(readOpening(text, particleMap(lang, named))).toEqual({ label: expected, raw });
    }
  });

  it('reads every listed particle of every language by itself', () => {
    for (const lang of LANGS) {
      const map = particleMap(lang, 'P');
      for (const y of PARTICLES[lang].yes) expect(readOpening(y, map).label).toBe('P');
      for (const n of PARTICLES[lang].no) expect(readOpening(n, map).label).toBe('notP');
    }
  });

  it('takes the longest key: 不是 over 不, whatever the map order', () => {
    const map: ReadingMap = { kind: 'particle', tokens: { 不: 'P', 不是: 'notP', 是: 'P' } };
    expect(readOpening('不是的', map)).toEqual({ label: 'notP', raw: '不是' });
    expect(readOpening('不对', map)).toEqual({ label: 'P', raw: '不' });
  });

  it('needs no boundary after CJK, kana and hangul keys', () => {
    expect(readOpening('はいそうです', particleMap('ja', 'P')).label).toBe('P');
    expect(readOpening('네요', particleMap('ko', 'P')).label).toBe('P');
    expect(readOpening('是错的', particleMap('zh', 'P')).label).toBe('P');
  });
});

describe('readOpening: stripping and normalisation', () => {
  const en = particleMap('en', 'P');
  it.each([
    '**Yes**, it was wrong.',
    '*Yes*',
    '_yes_',
    '# Yes',
    '> Yes, it was.',
    '"Yes."',
    '“Yes,” I would say.',
    "'yes'",
    '(Yes)',
    '[Yes]',
    '- Yes',
    '`Yes`',
    '   \n\t Yes',
    '\u200bYes',
    'ＹＥＳ',
    'YES!',
  ])('%j opens with yes', (text) => {
    expect(readOpening(text, en)).toEqual({ label: 'P', raw: 'yes' });
  });

  it('strips CJK and French quotes and brackets', () => {
    const quoted: [Language, string, ReadingLabel][] = [
      ['ja', '「はい」', 'P'],
      ['ja', '『いいえ』です', 'notP'],
      ['zh', '（是）', 'P'],
      ['zh', '【不是】', 'notP'],
      ['fr', '« Non », répondit-il.', 'notP'],
      ['de', '»Doch«', 'P'],
    ];
    for (const [language, text, label] of quoted) expect(readOpening(text, particleMap(language, 'P')).label, text).toBe(label);
  });

  it('reads an opening that follows more leading markup than the folded head holds', () => {
    expect(readOpening(`${' '.repeat(300)}\n**No**`, en).label).toBe('notP');
  });
});

describe('readOpening: Latin boundary', () => {
  const en = particleMap('en', 'P');
  it.each(['Yesterday I would have said so.', 'Nope.', 'Nonetheless, it was wrong.', 'Nobody would.', 'Yess'])(
    '%j is not a particle',
    (text) => {
      expect(readOpening(text, en)).toEqual({ label: 'invalid', raw: null });
    },
  );
  it.each(['Yes-', 'No.', 'No…', 'Yes—definitely', 'no', 'No\nbecause'])('%j is a particle', (text) => {
    expect(readOpening(text, en).label).not.toBe('invalid');
  });
  it('does not read other words that start with a particle', () => {
    expect(readOpening('Jawohl.', particleMap('de', 'P')).label).toBe('invalid');
    expect(readOpening('Sicher nicht.', particleMap('fr', 'P')).label).toBe('invalid');
    expect(readOpening('Nonobstant.', particleMap('fr', 'P')).label).toBe('invalid');
    expect(readOpening('Non-', particleMap('fr', 'P')).label).toBe('notP');
    // Known limit of R, documented: French "si" opening a conditional still reads as si.
    expect(readOpening('Si on considère les faits, oui.', particleMap('fr', 'P')).label).toBe('P');
  });
});

describe('readOpening: letters', () => {
  const map = letterMap('A', 'B');
  it.each(['A', 'A.', 'A:', 'A)', '(A)', '**A**', '[A]', 'a', 'A\nBecause it was wrong.', 'A: What Finn did was wrong.', ' A ', 'A I oppose it.'])(
    '%j reads A',
    (text) => {
      expect(readOpening(text, map)).toEqual({ label: 'P', raw: 'a' });
    },
  );
  it('reads B as the other proposition, and follows the recorded letter map', () => {
    expect(readOpening('B.', map).label).toBe('notP');
    const zw = letterMap('Z', 'W', 'notP');
    expect(readOpening('Z', zw).label).toBe('notP');
    expect(readOpening('**W**', zw).label).toBe('P');
  });
  it.each(['Answer: A', 'The answer is A.', 'A reasonable person would object.', 'AB', 'C', 'I think A.'])(
    '%j is not read by R',
    (text) => {
      expect(readOpening(text, map).label).toBe('invalid');
    },
  );
});

describe('readOpening: kinds and bad input', () => {
  it('reads verdict openings from the map only', () => {
    expect(readOpening('Wrong, because he lied.', VERDICT_MAPS.en)).toEqual({ label: 'P', raw: 'wrong' });
    expect(readOpening('Right.', VERDICT_MAPS.en).label).toBe('notP');
    expect(readOpening('Not wrong.', VERDICT_MAPS.en).label).toBe('invalid');
    expect(readOpening('Wrongly.', VERDICT_MAPS.en).label).toBe('invalid');
    expect(readOpening('I oppose what Finn did.', VERDICT_MAPS.enVerb)).toEqual({ label: 'P', raw: 'i oppose' });
    expect(readOpening('错的，他不该这么做。', VERDICT_MAPS.zh)).toEqual({ label: 'P', raw: '错的' });
  });

  it("reads a map of kind 'none' as none: the rule does not read free sentences", () => {
    const none: ReadingMap = { kind: 'none', tokens: {} };
    expect(readOpening('Yes, it was wrong.', none)).toEqual({ label: 'none', raw: null });
  });

  it.each(['', '   ', '**', 'I cannot answer that question.', '抱歉，我无法回答。'])('%j is invalid', (text) => {
    expect(readOpening(text, particleMap('en', 'P'))).toEqual({ label: 'invalid', raw: null });
  });

  it('rejects a map whose forms fold to one key with opposite sides', () => {
    const bad: ReadingMap = { kind: 'particle', tokens: { Yes: 'P', yes: 'notP' } };
    expect(() => readOpening('yes', bad)).toThrow(ReadingMapError);
    expect(() => readOpening('yes', bad)).toThrow(/fold to "yes".*P and notP/);
  });

  it('rejects a particle map without tokens and a token with a bad side', () => {
    expect(() => readOpening('yes', { kind: 'particle', tokens: {} })).toThrow(/no tokens/);
    const odd = { kind: 'letter', tokens: { a: 'maybe' } } as unknown as ReadingMap;
    expect(() => readOpening('a', odd)).toThrow(/expected "P" or "notP"/);
  });

  it('gives the same readings when one map object reads many replies', () => {
    const map = particleMap('de', 'notP');
    const texts = ['Ja.', 'Nein.', 'Doch!', 'Vielleicht.'];
    const first = texts.map((t) => readOpening(t, map).label);
    for (let i = 0; i < 1000; i++) expect(readOpening(texts[i % 4] ?? '', map).label).toBe(first[i % 4]);
    expect(first).toEqual(['notP', 'P', 'notP', 'invalid']);
  });
});
