import { describe, expect, it } from 'vitest';
import { extractOption, parseJudgeResult, prepareLanguageId, probeCandidates, readJudge, TOKENIZER_TABLES, tokenizerFor, DEFAULT_LABELS } from '../../../lib/batteries/ptrue/read/index.js';
import { CampaignFileError } from '../../../lib/errors.js';

describe('option extraction (§4.1)', () => {
  it.each([
    ['B. Water boils at 100 °C.', 'B', 'leading-letter'],
    ['(C) 심장은 혈액을 보냅니다.', 'C', 'leading-letter'],
    ['A, because demand grows.', 'A', 'leading-letter'],
    ['D', 'D', 'leading-letter'],
    ['**B**: 太平洋', 'B', 'leading-letter'],
    ['Ｂ．太平洋です。', 'B', 'leading-letter'],
    ['The answer is C.', 'C', 'answer-statement'],
    ['Answer: (B) Pacific', 'B', 'answer-statement'],
    ['La réponse est B, car…', 'B', 'answer-statement'],
    ['Réponse : D', 'D', 'answer-statement'],
    ['答案是B。', 'B', 'answer-statement'],
    ['正确选项：C', 'C', 'answer-statement'],
    ['答えはAです。', 'A', 'answer-statement'],
    ['정답은 B입니다.', 'B', 'answer-statement'],
    ['उत्तर: C', 'C', 'answer-statement'],
    ['सही विकल्प B है।', 'B', 'answer-statement'],
    // The final statement wins over an opening letter.
    ['A. Hmm, no. The correct option is D.', 'D', 'answer-statement'],
  ])('%s → %s', (text, letter, rule) => {
    expect(extractOption(text, 4)).toEqual({ letter, rule });
  });

  it.each([
    ['A tree is a plant.'],
    ['The answer is a mammal.'],
    ['Answer: Because water is dense.'],
    ['I am not sure.'],
    [''],
  ])('finds no option in %j', (text) => {
    expect(extractOption(text, 4)).toEqual({ letter: null, rule: 'none' });
  });

  it('treats a letter beyond the options as unextractable, and a null reply as none', () => {
    expect(extractOption('E. None of these', 4)).toEqual({ letter: null, rule: 'out-of-range' });
    expect(extractOption('E. None of these', 5)).toEqual({ letter: 'E', rule: 'leading-letter' });
    expect(extractOption(null, 4)).toEqual({ letter: null, rule: 'none' });
  });
});

describe('judge [RESULT] parser (§4.2, App. A)', () => {
  it('reads a terminal score with or without the Feedback prefix; 4–5 correct', () => {
    expect(parseJudgeResult('Feedback: The response names Seoul. [RESULT] 5')).toEqual({ ok: true, score: 5, feedback: 'The response names Seoul.', correct: true });
    expect(parseJudgeResult('Names the wrong city.\n[RESULT] 2\n')).toMatchObject({ ok: true, score: 2, correct: false });
    expect(parseJudgeResult('Vague. [RESULT]3')).toMatchObject({ score: 3, correct: false });
    expect(parseJudgeResult('Close enough. [RESULT] 4')).toMatchObject({ score: 4, correct: true });
  });

  it.each([
    [null, 'empty'],
    ['   ', 'empty'],
    ['The answer is right. Score: 5', 'no-result'],
    ['Good [RESULT] 4. Actually [RESULT] 5', 'several-results'],
    ['Good. [RESULT] 6', 'bad-score'],
    ['Good. [RESULT] (4)', 'bad-score'],
    ['Good. [RESULT] 4.', 'bad-score'],
    ['Good. [RESULT] 4 because', 'bad-score'],
    ['Feedback: [RESULT] 4', 'no-feedback'],
    ['[RESULT] 5', 'no-feedback'],
  ])('%j is malformed (%s)', (text, reason) => {
    expect(parseJudgeResult(text)).toEqual({ ok: false, reason });
  });

  it('labels malformed outputs apart, with no score', () => {
    expect(readJudge('j', 'Fine. [RESULT] 5')).toEqual({ reader: 'judge:j', label: 'correct', value: 5, raw: 'Fine. [RESULT] 5' });
    expect(readJudge('j', 'Score 5')).toEqual({ reader: 'judge:j', label: 'malformed', value: null, raw: 'Score 5' });
  });
});

describe('probe label tokens (App. A)', () => {
  it('gives the first-token ids of the English variants for each listed tokenizer, single tokens all', () => {
    const where = { file: 'demo.yaml', path: 'design.probe' };
    const qwen = probeCandidates(DEFAULT_LABELS, TOKENIZER_TABLES.qwen3!, where);
    expect(qwen.tokens).toMatchObject({ True: 2514, ' True': 3007, False: 4049, ' False': 3557 });
    expect(qwen.prefix).toEqual([]);
    expect(probeCandidates(DEFAULT_LABELS, TOKENIZER_TABLES.llama3!, where).tokens).toMatchObject({ True: 2575, ' True': 3082, False: 4139, ' False': 3641 });
  });

  it('marks translated labels that span several tokens as prefixes: French, Japanese, Korean and Hindi in every tokenizer', () => {
    const pairs = { fr: ['Vrai', 'Faux'], ja: ['正しい', '誤り'], ko: ['참', '거짓'], hi: ['सही', 'गलत'] } as const;
    for (const table of Object.values(TOKENIZER_TABLES)) {
      for (const [t, f] of Object.values(pairs)) {
        const c = probeCandidates({ true: [t], false: [f] }, table, { file: 'x', path: 'y' });
        expect(c.prefix.length).toBeGreaterThan(0);
      }
    }
  });

  it('refuses a variant with no ids and a True/False pair sharing a first token', () => {
    expect(() => probeCandidates({ true: ['Yes'], false: ['False'] }, TOKENIZER_TABLES.qwen3!, { file: 'c.yaml', path: 'design.probe.token_ids.m' })).toThrow(
      'c.yaml: design.probe.token_ids.m: no token ids for "Yes"',
    );
    expect(() => probeCandidates({ true: ['Vx'], false: ['Vy'] }, { Vx: [53, 1], Vy: [53, 2] }, { file: 'c.yaml', path: 'p' })).toThrow(CampaignFileError);
  });

  it('finds the tokenizer family from the provider model name', () => {
    expect(tokenizerFor('Qwen/Qwen3-8B')).toBe('qwen3');
    expect(tokenizerFor('meta-llama/Llama-3.1-8B-Instruct')).toBe('llama3');
    expect(tokenizerFor('google/gemma-3-12b-it')).toBe('gemma3');
    expect(tokenizerFor('mistralai/Mistral-7B-Instruct-v0.3')).toBeNull();
  });
});

describe('realised response language', () => {
  it('tells the six languages apart on short answers', async () => {
    const identify = await prepareLanguageId();
    const six = ['en', 'zh', 'fr', 'ja', 'ko', 'hi'];
    expect(identify('The capital of Australia is Canberra.', six).language).toBe('en');
    expect(identify("La capitale de l'Australie est Canberra.", six).language).toBe('fr');
    expect(identify('澳大利亚的首都是堪培拉。', six).language).toBe('zh');
    expect(identify('オーストラリアの首都はキャンベラです。', six)).toMatchObject({ language: 'ja', by: 'script' });
    expect(identify('호주의 수도는 캔버라입니다.', six)).toMatchObject({ language: 'ko', by: 'script' });
    expect(identify('ऑस्ट्रेलिया की राजधानी कैनबरा है।', six)).toMatchObject({ language: 'hi', by: 'script' });
    expect(identify('1969', six)).toEqual({ language: 'und', by: 'none', score: null });
    // Among the design's languages only: Korean text in an en/fr design is in none of them.
    expect(identify('호주의 수도', ['en', 'fr'])).toEqual({ language: 'und', by: 'none', score: null });
  });
});
