import { describe, expect, it } from 'vitest';
import { parseItems } from '../../../lib/batteries/ptrue/data/index.js';
import type { FileIssue } from '../../../lib/errors.js';
import { campaignFileError } from '../../helpers/fileErrors.js';

const LANGS = { languages: ['en', 'ko'] };
const mc = {
  id: 'mc-1',
  benchmark: 'mmmlu-demo',
  kind: 'multiple_choice',
  subject: 'geography',
  question: { en: 'Which ocean is the largest?', ko: '가장 큰 바다는?' },
  options: { en: ['Atlantic', 'Pacific', 'Indian'], ko: ['대서양', '태평양', '인도양'] },
  answer: 'B',
};
const sa = {
  id: 'sa-1',
  benchmark: 'lsqa-demo',
  kind: 'short_answer',
  content_language: 'ko',
  question: { en: 'What is the capital of South Korea?', ko: '대한민국의 수도는?' },
  answer: { en: 'Seoul', ko: '서울' },
  aliases: ['Seoul City'],
};
const jsonl = (...rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n');

const issuesOf = (f: () => unknown): FileIssue[] => [...campaignFileError(f).issues];

describe('items file (JSONL)', () => {
  it('reads multiple-choice and short-answer items', () => {
    const items = parseItems(jsonl(mc, sa, { ...sa, id: 'sa-2', answer: 'Seoul', content_language: undefined }), 'items.jsonl', 'jsonl', LANGS);
    expect(items).toHaveLength(3);
    expect(items[0]).toMatchObject({ id: 'mc-1', kind: 'multiple_choice', answerLetter: 'B', subject: 'geography', contentLanguage: null });
    expect(items[0]!.options!.ko).toEqual(['대서양', '태평양', '인도양']);
    expect(items[1]).toMatchObject({ answers: { en: 'Seoul', ko: '서울' }, aliases: ['Seoul City'], contentLanguage: 'ko', options: null });
    expect(items[2]!.answers).toEqual({ en: 'Seoul' });
  });

  it('names file, line, item and field for an item without a gold answer', () => {
    const issues = issuesOf(() => parseItems(jsonl(mc, { ...sa, answer: undefined }), 'items.jsonl', 'jsonl', LANGS));
    expect(issues).toEqual([
      { file: 'items.jsonl', path: 'line 2 (sa-1): answer', message: 'no gold answer; expected the reference answer (English) as text, or a mapping language → answer' },
    ]);
    expect(issuesOf(() => parseItems(jsonl({ ...mc, answer: '' }), 'f.jsonl', 'jsonl', LANGS))[0]!.message).toBe(
      'no gold answer; expected the letter of the correct option (A–C)',
    );
  });

  it('refuses a gold option out of range, and options that are not parallel', () => {
    const issues = issuesOf(() =>
      parseItems(jsonl({ ...mc, answer: 'D' }, { ...mc, id: 'mc-2', options: { en: ['a', 'b', 'c'], ko: ['가', '나'] } }), 'f.jsonl', 'jsonl', LANGS),
    );
    expect(issues).toEqual([
      { file: 'f.jsonl', path: 'line 1 (mc-1): answer', message: 'option "D" is out of range: the item has 3 options (A–C)' },
      { file: 'f.jsonl', path: 'line 2 (mc-2): options.ko', message: '2 options, but another language has 3; options must be parallel' },
    ]);
  });

  it('refuses an unknown language and a design language the item lacks, all at once', () => {
    const issues = issuesOf(() =>
      parseItems(jsonl({ ...sa, question: { en: 'Q?', kr: '질문?' } }, { ...sa, id: 'sa-9', content_language: 'xx' }), 'f.jsonl', 'jsonl', LANGS),
    );
    expect(issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'line 1 (sa-1): question.kr: unknown language "kr"; use one of en, ko',
      'line 1 (sa-1): question: no ko text; the design asks for en, ko',
      'line 2 (sa-9): content_language: unknown language "xx"; use one of en, ko',
    ]);
  });

  it('reports bad JSON, a duplicate id, an unexpected field, a bad kind and options on a short answer', () => {
    const text = [JSON.stringify(mc), '{not json', JSON.stringify({ ...mc, extra: 1 }), JSON.stringify({ ...sa, kind: 'essay' }), JSON.stringify({ ...sa, id: 'sa-3', options: mc.options })].join('\n');
    const issues = issuesOf(() => parseItems(text, 'f.jsonl', 'jsonl', LANGS));
    expect(issues.map((i) => i.path)).toEqual(['line 2', 'line 3 (mc-1): extra', 'line 3 (mc-1): id', 'line 4 (sa-1): kind', 'line 5 (sa-3): options']);
    expect(issues[0]!.message).toMatch(/^not valid JSON/);
    expect(issues[2]!.message).toBe('duplicate id; line 1 has it already');
    expect(issues[3]!.message).toBe('expected one of multiple_choice, short_answer, got "essay"');
  });

  it('never echoes a long value whole, and refuses an empty file', () => {
    const long = 'x'.repeat(500);
    const issues = issuesOf(() => parseItems(jsonl({ ...mc, kind: long }), 'f.jsonl', 'jsonl', LANGS));
    expect(issues[0]!.message.length).toBeLessThan(140);
    expect(issuesOf(() => parseItems('\n\n', 'f.jsonl', 'jsonl', LANGS))).toEqual([{ file: 'f.jsonl', path: '', message: 'no items; expected one base item per line' }]);
  });

  it('puts every problem in the error message, one line each', () => {
    expect(() => parseItems(jsonl({ ...mc, answer: 'Z' }, { ...sa, answer: null }), 'f.jsonl', 'jsonl', LANGS)).toThrow(
        'f.jsonl: 2 problems in the items\nf.jsonl: line 1 (mc-1): answer: expected an option letter A–J, got "Z"\nf.jsonl: line 2 (sa-1): answer: no gold answer; expected the reference answer (English) as text, or a mapping language → answer',
    );
  });
});

describe('items file (CSV)', () => {
  const header = 'id,benchmark,kind,subject,content_language,answer,aliases,question_en,question_ko,option_a_en,option_b_en,option_c_en,option_a_ko,option_b_ko,option_c_ko,answer_ko';
  it('gives the same items as JSONL', () => {
    const csv = [
      header,
      'mc-1,mmmlu-demo,multiple_choice,geography,,B,,Which ocean is the largest?,가장 큰 바다는?,Atlantic,Pacific,Indian,대서양,태평양,인도양,',
      'sa-1,lsqa-demo,short_answer,,ko,Seoul,Seoul City,What is the capital of South Korea?,대한민국의 수도는?,,,,,,,서울',
    ].join('\r\n');
    expect(parseItems(csv, 'items.csv', 'csv', LANGS)).toEqual(parseItems(jsonl(mc, sa), 'items.jsonl', 'jsonl', LANGS));
  });

  it('names CSV columns and lines in its problems, quoted line breaks included', () => {
    const csv = [header, '"mc-1",mmmlu-demo,multiple_choice,geo,,F,,"Which ocean,\nthe largest?",바다?,a,b,c,가,나,다,', 'sa-1,lsqa-demo,short_answer,,ko,,,Q?,질문?,,,,,,,'].join('\n');
    const issues = issuesOf(() => parseItems(csv, 'items.csv', 'csv', LANGS));
    expect(issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'line 2 (mc-1): answer: option "F" is out of range: the item has 3 options (A–C)',
      'line 4 (sa-1): answer: no gold answer; expected the reference answer (English) as text, or a mapping language → answer',
    ]);
  });

  it('refuses an unknown column and an unknown language column', () => {
    const issues = issuesOf(() => parseItems('id,benchmark,kind,answer,question_en,question_ko,question_kr,colour\nsa,b,short_answer,x,Q,질문,질문,red', 'items.csv', 'csv', LANGS));
    expect(issues.map((i) => `${i.path}: ${i.message.split(';')[0]}`)).toEqual(['line 1: colour: unknown column', 'line 2 (sa): question_kr: unknown language "kr"']);
  });
});
