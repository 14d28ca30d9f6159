import { describe, expect, it } from 'vitest';
import { closeLanguage, issuesCsv, issueKindOf, languageProblem, locate, missingCells, summarizeIssues } from '../../lib/battery/byoIssues.js';

// The words every battery uses for a bad file brought from elsewhere (lib/battery/byoIssues.ts).

describe('the close match of a language code', () => {
  it.each([
    ['jp', 'ja'],
    ['JA', 'ja'],
    ['en-US', 'en'],
    ['pt_BR', undefined],
    ['Japanese', 'ja'],
    ['kr', 'ko'],
    ['cn', 'zh'],
    ['fre', 'fr'],
    ['xx', undefined],
  ])('%s → %s among the P(True) languages', (given, expected) => {
    expect(closeLanguage(given, ['en', 'zh', 'fr', 'ja', 'ko', 'hi'])).toBe(expected);
  });

  it('suggests only allowed codes, and none where two are a letter away', () => {
    expect(closeLanguage('de', ['en', 'fr'])).toBeUndefined();
    expect(closeLanguage('ke', ['ko', 'ka'])).toBeUndefined();
  });

  it('never quotes a value that looks like a KEY=value line or a key', () => {
    expect(languageProblem('OPENAI_API_KEY=sk-abc', ['en'])).toBe('unknown language a value that is no language code (not shown); expected one of en');
    expect(languageProblem('sk-proj-abcdef', ['en'])).not.toContain('sk-proj');
    expect(languageProblem('jp', ['en', 'ja'])).toBe('unknown language "jp"; expected one of en, ja (did you mean "ja"?)');
  });
});

describe('issues: place, field, kind, summary and CSV', () => {
  it('reads the place and the field of each battery\'s paths', () => {
    expect(locate('row 12, field "language"')).toEqual({ location: 'row 12', field: 'language' });
    expect(locate('line 18: correct')).toEqual({ location: 'line 18', field: 'correct' });
    expect(locate('line 9, qa_id')).toEqual({ location: 'line 9', field: 'qa_id' });
    expect(locate('line 4')).toEqual({ location: 'line 4', field: '' });
    expect(locate('')).toEqual({ location: '', field: '' });
  });

  it('names the kind from the message where the battery gave none', () => {
    const k = (message: string) => issueKindOf({ file: 'f', path: 'line 1', message });
    expect(k('not valid JSON (the JSON ends too early)')).toBe('unreadable');
    expect(k('unknown language "xx"; expected one of en')).toBe('unknown language');
    expect(k('missing; expected string')).toBe('missing field');
    expect(k('unexpected field; a row has item, model')).toBe('unknown field');
    expect(k('duplicate row: line 4 has the same model')).toBe('duplicate or conflict');
    expect(k('expected 1/0 or true/false, got "maybe"')).toBe('wrong value');
    expect(issueKindOf({ file: 'f', path: '', message: 'x', kind: 'missing cell' })).toBe('missing cell');
  });

  it('summarises by kind and field, the largest group first, three of each', () => {
    const issues = [
      ...Array.from({ length: 5 }, (_, i) => ({ file: 'r.csv', path: `line ${i + 2}: p_true`, message: 'expected a probability in [0, 1], got "2"' })),
      { file: 'r.csv', path: 'line 9: q', message: 'unknown language "jp"; expected one of en, ja (did you mean "ja"?)' },
    ];
    expect(summarizeIssues(issues)).toEqual([
      'wrong value in "p_true": 5',
      '  r.csv: line 2: p_true: expected a probability in [0, 1], got "2"',
      '  r.csv: line 3: p_true: expected a probability in [0, 1], got "2"',
      '  r.csv: line 4: p_true: expected a probability in [0, 1], got "2"',
      '  … and 2 more',
      'unknown language in "q": 1',
      '  r.csv: line 9: q: unknown language "jp"; expected one of en, ja (did you mean "ja"?)',
    ]);
    expect(issuesCsv(issues.slice(-1))).toBe('file,location,field,kind,message\r\nr.csv,line 9,q,unknown language,"unknown language ""jp""; expected one of en, ja (did you mean ""ja""?)"\r\n');
  });
});

describe('missing cells against the design the rows claim', () => {
  it('expects every unit of a group in every cell the group has', () => {
    expect(
      missingCells([
        ['m1', 'i1', 'en'],
        ['m1', 'i1', 'fr'],
        ['m1', 'i2', 'en'],
        ['m2', 'i1', 'en'],
      ]),
    ).toEqual([{ group: 'm1', unit: 'i2', missing: ['fr'], present: ['en', 'fr'] }]);
  });
});
