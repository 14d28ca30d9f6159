/**
 * The stories file's messages quote at most 60 characters of any value or key (docs and the
 * loaders promise it: a wrong path may point at a file that holds a secret), whichever check
 * finds it: an agent missing from its text, an unknown key, an unknown language, a repeated id.
 */
import { describe, expect, it } from 'vitest';
import { parseStories } from '../../../../lib/batteries/far6/design/loadStories.js';

describe('stories file messages', () => {
  it('never quote more than 60 characters of what the file holds', () => {
    const long = (c: string) => c.repeat(300);
    const raw = {
      stories: [
        { id: `s-${long('a')}`, group: 'acceptable', renderings: { en: { agent: long('B'), text: 'Finn returned the wallet.' } } },
        { id: `s-${long('a')}`, group: 'acceptable', renderings: { en: { agent: 'Finn', text: 'Finn returned the wallet.', [long('k')]: 1 }, [long('z')]: { agent: 'x', text: 'x' } } },
      ],
    };
    let message = '';
    try {
      parseStories(raw, 'stories.yaml', ['en']);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('stories file stories.yaml has');
    expect(message).toMatch(/does not appear in the text/);
    expect(message).toMatch(/unexpected key/);
    expect(message).toMatch(/is not a known language/);
    expect(message).toMatch(/repeats the id/);
    // No run of one character longer than 60 (each long value is 300 of one letter).
    expect(message).not.toMatch(/(a{61}|B{61}|k{61}|z{61})/);
  });
});
