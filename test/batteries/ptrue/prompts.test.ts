import { describe, expect, it } from 'vitest';
import {
  generateMessages,
  judgeMessages,
  placeholdersOf,
  renderTemplate,
  resolveTemplates,
  verifyMessages,
} from '../../../lib/batteries/ptrue/prompts/index.js';
import { PTRUE_LANGUAGES, type BaseItem } from '../../../lib/batteries/ptrue/types.js';
import { CampaignFileError } from '../../../lib/errors.js';

const SIX = [...PTRUE_LANGUAGES];
const T = resolveTemplates(undefined, SIX, SIX, 'demo.yaml');
const mc: BaseItem = {
  id: 'mc-1',
  benchmark: 'mmmlu-demo',
  kind: 'multiple_choice',
  question: { en: 'Which ocean is the largest?', ko: '가장 큰 바다는?' },
  options: { en: ['Atlantic', 'Pacific'], ko: ['대서양', '태평양'] },
  answerLetter: 'B',
  answers: {},
  aliases: [],
  subject: 'geography',
  contentLanguage: null,
};
const sa: BaseItem = { ...mc, id: 'sa-1', kind: 'short_answer', options: null, answerLetter: null, answers: { en: 'Seoul', ko: '서울' }, aliases: ['Seoul City'] };

describe('templates', () => {
  it('fills placeholders once and keeps literal braces', () => {
    expect(renderTemplate('{a} {{a}} {b}', { a: '{b}', b: 'x' })).toBe('{b} {a} x');
    expect(placeholdersOf('{question} {{answer}} {answer} {question}')).toEqual(['question', 'answer']);
    expect(() => renderTemplate('{a}', {})).toThrow(/no value for \{a\}/);
  });

  it('every default passes its own check in the six languages', () => {
    for (const lang of SIX) {
      expect(placeholdersOf(T.verify[lang]!)).toEqual(['question', 'answer']);
      expect(placeholdersOf(T.generate.multiple_choice[lang]!).sort()).toEqual(['options', 'question', 'response_language']);
      expect(placeholdersOf(T.generate.short_answer[lang]!).sort()).toEqual(['question', 'response_language']);
    }
  });

  it('refuses a verifier template without {answer}, an unknown placeholder and a language outside the design, naming file and field', () => {
    const bad = () =>
      resolveTemplates(
        { verify: { fr: 'Question : {question}. Vrai ou faux ?', de: 'Frage: {question} {answer}' }, judge: 'Rate {response} [RESULT] {score}' },
        SIX,
        SIX,
        'demo.yaml',
      );
    expect(bad).toThrow(CampaignFileError);
    try {
      bad();
    } catch (err) {
      expect((err as CampaignFileError).issues).toEqual([
        { file: 'demo.yaml', path: 'design.prompts.verify.fr', message: 'the template has no {answer} placeholder; it must contain {question} and {answer}' },
        { file: 'demo.yaml', path: 'design.prompts.verify.de', message: '"de" is not a language of the design (en, zh, fr, ja, ko, hi)' },
        { file: 'demo.yaml', path: 'design.prompts.judge', message: 'the template has no {question}, {reference} placeholder; it must contain {question} and {response} and {reference}' },
        { file: 'demo.yaml', path: 'design.prompts.judge', message: 'unknown placeholder {score}; use {question}, {response}, {reference}, {reference_en}, {aliases}, {response_language} (write {{ and }} for literal braces)' },
      ]);
    }
  });

  it('asks for a template where a design language has no default', () => {
    expect(() => resolveTemplates(undefined, ['en', 'de'], ['en'], 'c.yaml')).toThrow(/design\.prompts\.generate\.multiple_choice\.de: no default template for "de"; give one here/);
    const t = resolveTemplates({ generate: { multiple_choice: { de: '{question}\n{options}\nAntworte auf {response_language}.' }, short_answer: { de: '{question} ({response_language})' } } }, ['en', 'de'], ['en'], 'c.yaml');
    expect(t.generate.short_answer.de).toBe('{question} ({response_language})');
  });
});

describe('messages', () => {
  it('multiple choice: question, options, then the directive last, all in the question language', () => {
    const [m] = generateMessages(mc, 'ko', 'fr', T);
    expect(m!.role).toBe('user');
    expect(m!.content).toBe('가장 큰 바다는?\n\nA. 대서양\nB. 태평양\n\n정답 선택지의 알파벳을 쓰고 간단히 설명하세요. 프랑스어로 답하세요.');
  });

  it('short answer: the directive first, naming the response language in the question language', () => {
    expect(generateMessages(sa, 'en', 'ko', T)[0]!.content).toBe('Answer the following question in Korean with a short answer.\n\nWhich ocean is the largest?');
  });

  it('verifier: localised instruction, question and reply unchanged, English labels in every language', () => {
    for (const v of SIX) {
      const c = verifyMessages(mc, 'ko', v, 'B. 태평양', T)[0]!.content;
      expect(c).toContain('가장 큰 바다는?\n\nA. 대서양\nB. 태평양');
      expect(c).toContain('B. 태평양');
      expect(c).toMatch(/True.*False/s);
    }
  });

  it('judge: the question, the reply, the reference in the requested language, the English cross-check and aliases', () => {
    const c = judgeMessages(sa, 'en', 'ko', '서울입니다', T)[0]!.content;
    expect(c).toContain('###Response to evaluate:\n서울입니다');
    expect(c).toContain('###Reference answer (Korean):\n서울');
    expect(c).toContain('###Reference answer (English):\nSeoul');
    expect(c).toContain('###Other accepted answers (English):\nSeoul City');
    expect(c).toMatch(/\[RESULT\]/);
  });
});
