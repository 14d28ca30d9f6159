import { describe, expect, it } from 'vitest';
import { CellEstimates, compareReadouts, estimate, parseReadout, readoutConvergence } from '../../../../lib/batteries/far6/analysis/estimators.js';
import type { ItemShareRow, ReadoutComparison, StoryScore } from '../../../../lib/batteries/far6/analysis/types.js';

/** One item row; `p`/`np` decisive counts, `other` non-decisive ones (both). */
function item(o: Partial<ItemShareRow> & { p: number; np: number; other?: number }): ItemShareRow {
  const { p, np, other = 0, ...rest } = o;
  return {
    model: 'm',
    language: 'en',
    reader: 'rule',
    form: 'plain',
    constraint: 'yesno',
    story: 's1',
    story_group: 'contested',
    concept_pair: 'wr',
    construction: 'adj',
    named: 'P',
    option_order: 0,
    n_replies: p + np + other,
    n_p: p,
    n_notp: np,
    n_both: other,
    n_none: 0,
    n_invalid: 0,
    second_listed: null,
    ...rest,
  };
}

describe('estimate: s and b (Same Judgment, Different Yes §3, "Estimation steps")', () => {
  it('pools repeats within an item, then weights orders equally whatever their repeat counts', () => {
    // Prepare: keying P, order 0 has three repeats (2 P, 1 notP) → 2/3; order 1 has one repeat (notP) → 0.
    // Pooling all four replies would give 1/2; the seed's order gives q_P = (2/3 + 0) / 2 = 1/3.
    // Keying notP: order 0 → 1/1 (the two "both" readings are not decisive), order 1 → 1/2; q_notP = 3/4.
    const rows = [
      item({ named: 'P', option_order: 0, p: 2, np: 1 }),
      item({ named: 'P', option_order: 1, p: 0, np: 1 }),
      item({ named: 'notP', option_order: 0, p: 1, np: 0, other: 2 }),
      item({ named: 'notP', option_order: 1, p: 1, np: 1 }),
    ];
    // Act
    const { storyScores } = estimate(rows);
    // Assess: s = (1/3 + 3/4) / 2 = 13/24, b = (1/3 − 3/4) / 2 = −5/24.
    expect(storyScores).toHaveLength(1);
    expect(storyScores[0]).toMatchObject({ model: 'm', language: 'en', readout: 'plain/yesno/rule', story: 's1', story_group: 'contested', n_pairs: 1 });
    expect(storyScores[0]?.s).toBeCloseTo(13 / 24, 12);
    expect(storyScores[0]?.b).toBeCloseTo(-5 / 24, 12);
  });

  it('averages items within one order first, then the orders that have decisive support', () => {
    const rows = [
      // Keying P: order 0 holds two items (two constructions) → (1 + 0.5) / 2 = 0.75; order 1 → 0;
      // q_P = (0.75 + 0) / 2 = 0.375 (an equal weight per item would give 0.5).
      item({ named: 'P', option_order: 0, construction: 'a', p: 3, np: 0 }),
      item({ named: 'P', option_order: 0, construction: 'b', p: 1, np: 1 }),
      item({ named: 'P', option_order: 1, p: 0, np: 2 }),
      // Keying notP: order 1 has only "both" readings, so order 0 alone: q_notP = 0.25.
      item({ named: 'notP', option_order: 0, p: 1, np: 3 }),
      item({ named: 'notP', option_order: 1, p: 0, np: 0, other: 3 }),
    ];
    const [score] = estimate(rows).storyScores;
    expect(score?.s).toBeCloseTo((0.375 + 0.25) / 2, 12);
    expect(score?.b).toBeCloseTo((0.375 - 0.25) / 2, 12);
  });

  it('gives no s to a concept pair without decisive support in both keyings', () => {
    const rows = [
      item({ concept_pair: 'wr', named: 'P', p: 1, np: 0 }),
      item({ concept_pair: 'wr', named: 'notP', p: 0, np: 1 }),
      // Concept pair os: keying notP has only non-decisive readings.
      item({ concept_pair: 'os', named: 'P', p: 0, np: 1 }),
      item({ concept_pair: 'os', named: 'notP', p: 0, np: 0, other: 4 }),
      // Story s2: one keying only → no story score at all.
      item({ story: 's2', named: 'P', p: 1, np: 0 }),
    ];
    const { storyScores, cellHabits } = estimate(rows);
    expect(storyScores.map((s) => [s.story, s.s, s.b, s.n_pairs])).toEqual([['s1', 0.5, 0.5, 1]]);
    expect(cellHabits).toHaveLength(1);
    expect(cellHabits[0]?.n_stories).toBe(1);
  });

  it('averages s and b over concept pairs into the story score', () => {
    const rows = [
      // Pair A: q_P = 1, q_notP = 0.5 → s = 0.75, b = 0.25.
      item({ concept_pair: 'A', named: 'P', p: 2, np: 0 }),
      item({ concept_pair: 'A', named: 'notP', p: 1, np: 1 }),
      // Pair B: q_P = 0.5, q_notP = 0 → s = 0.25, b = 0.25.
      item({ concept_pair: 'B', named: 'P', p: 1, np: 1 }),
      item({ concept_pair: 'B', named: 'notP', p: 0, np: 2 }),
    ];
    const [score] = estimate(rows).storyScores;
    expect(score).toMatchObject({ s: 0.5, b: 0.25, n_pairs: 2 });
  });

  it('keeps cells and readouts apart and averages b over stories for the keying bias', () => {
    const rows = [
      item({ story: 's1', named: 'P', p: 1, np: 0 }), // s1: q_P 1
      item({ story: 's1', named: 'notP', p: 0, np: 1 }), // q_notP 0 → b = 0.5
      item({ story: 's2', named: 'P', p: 0, np: 1 }),
      item({ story: 's2', named: 'notP', p: 0, np: 1 }), // b = 0
      item({ language: 'de', named: 'P', p: 0, np: 1 }),
      item({ language: 'de', named: 'notP', p: 1, np: 0 }), // b = −0.5
      item({ reader: 'judge:j', named: 'P', p: 1, np: 0 }),
      item({ reader: 'judge:j', named: 'notP', p: 1, np: 0 }), // b = 0
    ];
    const { cellHabits } = estimate(rows);
    expect(cellHabits.map((h) => [h.language, h.readout, h.n_stories, h.keying_bias, h.second_listed_pref, h.named_term_pull])).toEqual([
      ['de', 'plain/yesno/rule', 1, -0.5, null, null],
      ['en', 'plain/yesno/judge:j', 1, 0, null, null],
      ['en', 'plain/yesno/rule', 2, 0.25, null, null],
    ]);
  });

  it('refuses a story that sits in two story groups', () => {
    const rows = [item({ named: 'P', p: 1, np: 0 }), item({ named: 'notP', p: 1, np: 0, story_group: 'violation' })];
    expect(() => estimate(rows)).toThrow(/story "s1".*"contested" and "violation"/);
  });
});

describe('estimate: label habits (Same Judgment, Different Yes §6)', () => {
  it('measures the second-listed preference and the named-term pull on proposition labels', () => {
    const label = { constraint: 'label' as const };
    const rows = [
      // Keying P: P listed first (order 0) → P share 4/5; P listed second (order 1) → 9/10.
      item({ ...label, named: 'P', option_order: 0, second_listed: 'notP', p: 4, np: 1 }),
      item({ ...label, named: 'P', option_order: 1, second_listed: 'P', p: 9, np: 1 }),
      // Keying notP: P first → 2/5; P second → 3/5.
      item({ ...label, named: 'notP', option_order: 0, second_listed: 'notP', p: 2, np: 3 }),
      item({ ...label, named: 'notP', option_order: 1, second_listed: 'P', p: 3, np: 2 }),
    ];
    const { storyScores, cellHabits } = estimate(rows);
    // q_P = 0.85, q_notP = 0.5: s = 0.675, b = 0.175.
    expect(storyScores[0]?.s).toBeCloseTo(0.675, 12);
    expect(storyScores[0]?.b).toBeCloseTo(0.175, 12);
    const h = cellHabits[0];
    // Second-listed, by the definition: keying P, P first: second (notP) 0.2 − first 0.8 = −0.6;
    // P second: 0.9 − 0.1 = 0.8; mean over orders 0.1, half 0.05. Keying notP: P first: second
    // (notP) 0.6 − first 0.4 = 0.2; P second: 0.6 − 0.4 = 0.2; mean 0.2, half 0.1. Over keyings: 0.075.
    expect(h?.second_listed_pref).toBeCloseTo(0.075, 12);
    expect(h?.n_stories_position).toBe(1);
    // Named-term pull, by the definition: keying P chooses P (named) 0.85 vs 0.15 → 0.7; keying notP
    // chooses notP (named) 0.5 vs 0.5 → 0; mean 0.35, half 0.175.
    expect(h?.named_term_pull).toBeCloseTo(0.175, 12);
    expect(h?.keying_bias).toBeCloseTo(0.175, 12);
  });

  it('leaves the second-listed preference null without both positions', () => {
    const label = { constraint: 'label' as const, second_listed: 'P' as const };
    const rows = [item({ ...label, named: 'P', p: 1, np: 0 }), item({ ...label, named: 'notP', p: 1, np: 1 })];
    const [h] = estimate(rows).cellHabits;
    expect(h?.second_listed_pref).toBeNull();
    expect(h?.n_stories_position).toBe(0);
    expect(h?.named_term_pull).toBeCloseTo(0.25, 12);
  });
});

function profile(readout: string, values: readonly number[], opts: { language?: string; offset?: number } = {}): StoryScore[] {
  return values.map((s, i) => ({
    model: 'm',
    language: opts.language ?? 'en',
    readout,
    story: `s${String(i + (opts.offset ?? 0)).padStart(2, '0')}`,
    story_group: 'contested',
    s,
    b: 0,
    n_pairs: 1,
  }));
}

describe('CellEstimates: the estimators fed whole cells a few at a time', () => {
  // Four cells, two readouts, twelve stories, shares that differ by cell and story.
  const rows: ItemShareRow[] = [];
  for (const model of ['m1', 'm2']) {
    for (const language of ['en', 'ko']) {
      for (const reader of ['rule', 'judge:j']) {
        for (let j = 0; j < 12; j++) {
          for (const named of ['P', 'notP'] as const) {
            for (const option_order of [0, 1]) {
              const p = (j * 7 + model.length * 3 + language.charCodeAt(0) + option_order + (named === 'P' ? 2 : 0) + reader.length) % 5;
              rows.push(item({ model, language, reader, story: `s${String(j).padStart(2, '0')}`, named, option_order, p, np: 4 - p, other: j % 2 }));
            }
          }
        }
      }
    }
  }
  const cellOf = (r: ItemShareRow): string => `${r.model}/${r.language}`;

  it('gives what estimate gives on all the rows, to the last digit', () => {
    const cells = new CellEstimates();
    for (const key of [...new Set(rows.map(cellOf))]) cells.add(rows.filter((r) => cellOf(r) === key));
    const parts = cells.results();
    expect(parts).toEqual(estimate(rows));
    expect(parts.storyScores).toHaveLength(4 * 2 * 12);
    expect(parts.comparisons).toHaveLength(4);
  });

  it('refuses a cell whose rows come in two parts', () => {
    const cells = new CellEstimates();
    const m1en = rows.filter((r) => cellOf(r) === 'm1/en');
    cells.add(m1en.slice(0, 10));
    expect(() => cells.add(m1en.slice(10))).toThrow('item_shares.sql: the item rows of cell m1/en came in two parts; expected the rows ordered by model and language');
  });
});

describe('compareReadouts and readoutConvergence', () => {
  it('correlates two readouts of one cell on their common stories', () => {
    // x = 0.1..0.8, y swaps neighbours: r = 38/42 by hand, mean |Δ| = 0.1.
    const x = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
    const y = [0.2, 0.1, 0.4, 0.3, 0.6, 0.5, 0.8, 0.7];
    const scores = [...profile('a', x), ...profile('b', [...y, 0.9]), ...profile('a', [0.5], { offset: 20 })];
    const [cmp] = compareReadouts(scores);
    expect(cmp).toMatchObject({ model: 'm', language: 'en', readout_a: 'a', readout_b: 'b', n_common: 8 });
    expect(cmp?.r).toBeCloseTo(38 / 42, 12);
    expect(cmp?.mean_abs_diff).toBeCloseTo(0.1, 12);
  });

  it('returns null r and mean |Δ| below eight common stories, with the count', () => {
    const scores = [...profile('a', [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]), ...profile('b', [0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1])];
    expect(compareReadouts(scores)).toEqual([{ model: 'm', language: 'en', readout_a: 'a', readout_b: 'b', n_common: 7, r: null, mean_abs_diff: null }]);
    // A lower threshold is an explicit choice.
    expect(compareReadouts(scores, { minCommonStories: 7 })[0]?.r).toBeCloseTo(-1, 12);
  });

  it('returns null r when one profile has no variance, but keeps mean |Δ|', () => {
    const scores = [...profile('a', Array(8).fill(1)), ...profile('b', [1, 0.5, 1, 1, 1, 1, 1, 0.5])];
    const [cmp] = compareReadouts(scores);
    expect(cmp?.r).toBeNull();
    expect(cmp?.mean_abs_diff).toBeCloseTo(0.125, 12);
  });

  it('compares only the requested pairs, in the requested orientation', () => {
    const v = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9];
    const scores = [...profile('a', v), ...profile('b', v), ...profile('c', v)];
    const out = compareReadouts(scores, { readoutPairs: [['c', 'a'], ['a', 'zzz']] });
    expect(out.map((c) => [c.readout_a, c.readout_b, c.n_common])).toEqual([['c', 'a', 8]]);
    expect(compareReadouts(scores)).toHaveLength(3);
  });

  it('summarises a readout pair over cells by median and 10–90 % quantiles', () => {
    const base = { model: 'm', readout_a: 'a', readout_b: 'b', n_common: 10 };
    const comparisons: ReadoutComparison[] = [
      { ...base, language: 'en', r: 0.9, mean_abs_diff: 0.1 },
      { ...base, language: 'de', r: 0.2, mean_abs_diff: 0.3 },
      { ...base, language: 'fr', r: 0.5, mean_abs_diff: 0.2 },
      { ...base, language: 'ja', r: null, mean_abs_diff: null },
    ];
    const [conv] = readoutConvergence(comparisons);
    expect(conv).toMatchObject({ readout_a: 'a', readout_b: 'b', n_cells: 3, median_r: 0.5, median_abs_diff: 0.2 });
    expect(conv?.q10_r).toBeCloseTo(0.26, 12);
    expect(conv?.q90_r).toBeCloseTo(0.82, 12);
  });

  it('lists a requested pair with no cells as empty', () => {
    expect(readoutConvergence([], [['a', 'b']])).toEqual([
      { readout_a: 'a', readout_b: 'b', n_cells: 0, median_r: null, q10_r: null, q90_r: null, median_abs_diff: null },
    ]);
  });
});

describe('parseReadout', () => {
  it('splits at the first two slashes only', () => {
    expect(parseReadout('negint/yesno/judge:anthropic/sonnet')).toEqual({ form: 'negint', constraint: 'yesno', reader: 'judge:anthropic/sonnet' });
    expect(() => parseReadout('plain/yesno')).toThrow(/form\/constraint\/reader/);
  });
});
