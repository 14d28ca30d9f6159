import { describe, expect, it } from 'vitest';
import { parseStories, scriptIssue } from '../../../../lib/batteries/far6/design/loadStories.js';
import { syntheticGroupSizes, syntheticStories } from '../../../../lib/batteries/far6/design/syntheticStories.js';
import { LANGUAGES } from '../../../../lib/batteries/far6/types.js';
import type { Far6Story } from '../../../../lib/batteries/far6/types.js';

const countGroups = (stories: readonly Far6Story[]) => ({
  acceptable: stories.filter((s) => s.group === 'acceptable').length,
  contested: stories.filter((s) => s.group === 'contested').length,
  violation: stories.filter((s) => s.group === 'violation').length,
});

describe('syntheticStories', () => {
  it('gives the paper split for 105 stories (26 / 46 / 33)', () => {
    const stories = syntheticStories(105, LANGUAGES, 1);

    expect(stories).toHaveLength(105);
    expect(countGroups(stories)).toEqual({ acceptable: 26, contested: 46, violation: 33 });
  });

  it.each([0, 1, 2, 3, 10, 45, 104, 210, 1000])('splits %i stories proportionally and sums to n', (n) => {
    const sizes = syntheticGroupSizes(n);

    expect(sizes.acceptable + sizes.contested + sizes.violation).toBe(n);
    // Largest remainder: each group within one story of its exact share.
    expect(Math.abs(sizes.acceptable - (n * 26) / 105)).toBeLessThan(1);
    expect(Math.abs(sizes.contested - (n * 46) / 105)).toBeLessThan(1);
    expect(Math.abs(sizes.violation - (n * 33) / 105)).toBeLessThan(1);
    expect(countGroups(syntheticStories(n, ['en'], 3))).toEqual(sizes);
  });

  it('is deterministic from the seed and changes with it', () => {
    const a = syntheticStories(105, LANGUAGES, 42);
    const b = syntheticStories(105, LANGUAGES, 42);
    const c = syntheticStories(105, LANGUAGES, 43);

    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    expect(c.map((s) => s.id)).toEqual(a.map((s) => s.id));
  });

  it('marks every story as synthetic with unique syn- ids', () => {
    const stories = syntheticStories(1200, ['en'], 5);

    expect(stories.every((s) => /^syn-\d{4}$/.test(s.id))).toBe(true);
    expect(new Set(stories.map((s) => s.id)).size).toBe(1200);
  });

  it('interleaves the groups rather than emitting them in blocks', () => {
    const first = syntheticStories(105, ['en'], 9).slice(0, 30);

    expect(new Set(first.map((s) => s.group)).size).toBe(3);
  });

  it('renders the requested languages only, each in its script and containing its agent', () => {
    const stories = syntheticStories(105, LANGUAGES, 11);

    for (const story of stories) {
      expect(Object.keys(story.renderings).sort()).toEqual([...LANGUAGES].sort());
      for (const language of LANGUAGES) {
        const r = story.renderings[language]!;
        expect(r.text).toContain(r.agent);
        expect(scriptIssue(language, r.text), `${story.id}.${language}: ${r.text}`).toBeUndefined();
      }
    }
    expect(Object.keys(syntheticStories(3, ['ko'], 11)[0]!.renderings)).toEqual(['ko']);
  });

  it('uses the Korean topic particle that fits the name', () => {
    const texts = syntheticStories(105, ['ko'], 2).map((s) => s.renderings.ko!);

    for (const { agent, text } of texts) {
      const last = agent.codePointAt(agent.length - 1)! - 0xac00;
      expect(text.startsWith(`${agent}${last % 28 === 0 ? '는' : '은'} `)).toBe(true);
    }
  });

  it('passes the stories-file validator unchanged', () => {
    const stories = syntheticStories(105, LANGUAGES, 8);

    expect(parseStories({ stories }, 'synthetic', LANGUAGES)).toEqual(stories);
  });

  it('rejects a negative or fractional count and an empty language list', () => {
    expect(() => syntheticStories(-1, ['en'], 1)).toThrow(RangeError);
    expect(() => syntheticStories(2.5, ['en'], 1)).toThrow(RangeError);
    expect(() => syntheticStories(3, [], 1)).toThrow(RangeError);
  });
});
