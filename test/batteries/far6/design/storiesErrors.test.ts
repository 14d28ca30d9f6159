import { describe, expect, it } from 'vitest';
import { CampaignFileError } from '../../../../lib/errors.js';
import { loadStories, parseStories, scriptIssue } from '../../../../lib/batteries/far6/design/loadStories.js';
import type { Language } from '../../../../lib/batteries/far6/types.js';

const fixture = (name: string): string => `test/fixtures/far6/stories-${name}.yaml`;

async function failure(file: string, languages: readonly Language[]): Promise<CampaignFileError> {
  const error = await loadStories(file, languages).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CampaignFileError);
  return error as CampaignFileError;
}

describe('loadStories on bad input', () => {
  // [fixture name, path of the one issue, languages asked for, what its message says]
  it.each([
    ['unknown-language', 'stories[0].renderings.kr', ['en'], ['"kr" is not a known language', 'en, zh, de, ja, ko, fr']],
    ['missing-language', 'stories[1].renderings.ko', ['en', 'ko'], ['missing', 'the campaign asks for en, ko']],
    ['empty-text', 'stories[1].renderings.en.text', ['en'], ['text is empty']],
    ['agent-not-in-text', 'stories[0].renderings.de.agent', ['en', 'de'], ['"Jonas" does not appear in the text']],
    ['duplicate-id', 'stories[2].id', ['en'], ['"s01" repeats the id of stories[0]']],
    ['bad-group', 'stories[0].group', ['en'], ['"neutral" is not a story group', 'acceptable, contested, violation']],
    ['wrong-script', 'stories[0].renderings.ja.text', ['zh', 'ja'], ['expected Japanese text with kana']],
    ['syntax-error', 'line 7, column 3', ['en'], ['invalid YAML']],
  ] as const)('%o: one error naming the file, %o and what was expected', async (name, path, languages, says) => {
    const file = fixture(name);

    const error = await failure(file, languages);

    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatchObject({ file, path });
    expect(error.message).toContain(`${file}: ${path}: `);
    for (const text of says) expect(error.issues[0]!.message).toContain(text);
  });

  it('collects every problem of a file into one error', async () => {
    const file = fixture('many-problems');

    const error = await failure(file, ['en', 'fr']);

    expect(error.issues.map((i) => i.path)).toEqual([
      'stories[0].group',
      'stories[0].renderings.en.text',
      'stories[0].renderings.fr.agent',
      'stories[1].id',
      'stories[1].renderings.es',
      'stories[1].renderings.fr',
    ]);
    for (const issue of error.issues) expect(error.message).toContain(`${file}: ${issue.path}: ${issue.message}`);
  });

  it('accepts a file that covers exactly the languages asked for, and rejects it when one more is asked', async () => {
    const file = fixture('en-only');

    await expect(loadStories(file, ['en'])).resolves.toEqual([
      { id: 's01', group: 'acceptable', renderings: { en: { agent: 'Finn', text: 'Finn gave blood.' } } },
    ]);
    const error = await failure(file, ['en', 'ko']);
    expect(error.issues.map((i) => i.path)).toEqual(['stories[0].renderings.ko']);
  });

  it('names an unreadable file and keeps the cause', async () => {
    const file = fixture('does-not-exist');

    const error = await failure(file, ['en']);

    expect(error.message).toContain(file);
    expect(error.message).toContain('no such stories file; check the path');
    expect(error.cause).toBeDefined();
  });
});

describe('parseStories', () => {
  it('rejects a document without a stories list, naming what was expected', () => {
    expect(() => parseStories([], 'inline.yaml', ['en'])).toThrow(/inline\.yaml: expected a mapping with a "stories" list, got a list/);
    expect(() => parseStories({ stories: [] }, 'inline.yaml', ['en'])).toThrow(/inline\.yaml: stories: the list is empty/);
    expect(() => parseStories({ storys: [] }, 'inline.yaml', ['en'])).toThrow(/unexpected top-level key\(s\) "storys"/);
  });

  it('reports missing fields and wrong shapes at their paths', () => {
    const raw = { stories: [{ id: 's1' }, 7, { id: 's3', group: 'violation', renderings: { en: 'Ben kicked a cat.' } }] };

    let error: unknown;
    try {
      parseStories(raw, 'inline.yaml', ['en']);
    } catch (e) {
      error = e;
    }

    expect(error).toBeInstanceOf(CampaignFileError);
    expect((error as CampaignFileError).issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'stories[0].group: missing; expected one of acceptable, contested, violation',
      'stories[0].renderings: missing; expected a mapping from language to { agent, text }',
      'stories[1]: expected a story mapping { id, group, renderings }, got 7',
      'stories[2].renderings.en: expected a mapping { agent, text }, got "Ben kicked a cat."',
    ]);
  });

  it('trims surrounding whitespace (YAML block scalars end in a newline)', () => {
    const raw = { stories: [{ id: 's1', group: 'acceptable', renderings: { en: { agent: ' Finn ', text: 'Finn gave blood.\n' } } }] };

    expect(parseStories(raw, 'inline.yaml', ['en'])[0]!.renderings.en).toEqual({ agent: 'Finn', text: 'Finn gave blood.' });
  });

  it('explains an agent that differs from the text only in Unicode normalisation', () => {
    const decomposed = 'Le\u0301a'; // "Léa" with a combining accent
    const raw = { stories: [{ id: 's1', group: 'acceptable', renderings: { fr: { agent: decomposed, text: 'Léa a donné son sang.' } } }] };

    expect(() => parseStories(raw, 'inline.yaml', ['fr'])).toThrow(/NFC/);
  });
});

describe('scriptIssue', () => {
  it.each([
    ['zh', '陈芳去医院献了血。', true],
    ['zh', '由美は献血をした。', false],
    ['ja', '由美は献血をした。', true],
    ['ja', '陈芳去医院献了血。', false],
    ['ko', '지은은 헌혈을 했다.', true],
    ['ko', '由美は献血をした。', false],
    ['de', 'Anna spendete Blut.', true],
    ['fr', '지은은 헌혈을 했다.', false],
    ['en', 'Emma gave blood, said 陈芳.', false],
  ] as const)('%s %s → ok %s', (language, text, ok) => {
    expect(scriptIssue(language, text) === undefined).toBe(ok);
  });
});
