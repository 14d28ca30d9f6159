import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeCampaign } from '../../../../lib/batteries/far6/analysis/analyzeCampaign.js';
import { sameReplyPairs } from '../../../../lib/batteries/far6/analysis/sameReplies.js';
import type { AnalysisResults } from '../../../../lib/batteries/far6/analysis/types.js';
import { fixtureRows, ParquetFixture } from './fixtures.js';

/**
 * By hand. One cell, ten stories, negative-interrogative yes/no items in both keyings, two repeats.
 * Judge: P from story 5 on, except repeat 1 of keying P, judged "both" (not decisive). Rule:
 * repeat 0 agrees with the judge, repeat 1 says the opposite. On the replies both read decisively:
 * judge s = 1[j≥5]; rule q_P = 1[j≥5], q_notP = ½, so s = ¼ + ½·1[j≥5]: r = 1, mean |Δ| = ¼.
 * On all its replies the rule's s is ½ everywhere: no r against anything.
 */
describe('the same replies read twice, identical weights (Same Judgment, Different Yes §3–§4)', () => {
  let fx: ParquetFixture;
  let results: AnalysisResults;

  beforeAll(async () => {
    fx = await ParquetFixture.create();
    const input = fixtureRows();
    const { prompts, replies, readings } = input;
    const cell = { model: 'alpha', language: 'en' };
    for (let j = 0; j < 10; j++) {
      for (const named of ['P', 'notP'] as const) {
        for (const repeat of [0, 1]) {
          const id = `s${j}-${named}-${repeat}`;
          prompts.push({ ...cell, item_id: id, prompt_key: `s${j}-${named}`, story: `s${j}`, named, repeat, form: 'negint' });
          replies.push({ ...cell, item_id: id, attempt: 1, status: 'ok', created_at: '2026-01-01T00:00:00Z' });
          const sentence = j >= 5 ? 'P' : 'notP';
          const opposite = j >= 5 ? 'notP' : 'P';
          readings.push({ ...cell, item_id: id, reader: 'judge:j', label: repeat === 1 && named === 'P' ? 'both' : sentence, judge_item_id: `j-${id}` });
          readings.push({ ...cell, item_id: id, reader: 'rule', label: repeat === 0 ? sentence : opposite });
        }
      }
    }
    await fx.writeAll(input);
    results = await analyzeCampaign(fx.db, fx.tables);
  });

  afterAll(async () => {
    await fx.close();
  });

  it('compares rule and judge profiles built from the same replies', () => {
    const same = results.sameReplies;
    expect(same?.storyScores).toBe(20);
    expect(same?.comparisons).toHaveLength(1);
    const [c] = same?.comparisons ?? [];
    expect(c).toMatchObject({ model: 'alpha', language: 'en', readout_a: 'negint/yesno/judge:j [with rule]', readout_b: 'negint/yesno/rule [with judge:j]', n_common: 10 });
    expect(c?.r).toBeCloseTo(1, 12);
    expect(c?.mean_abs_diff).toBeCloseTo(0.25, 12);
    expect(same?.convergence[0]).toMatchObject({ n_cells: 1 });
    // On all its replies, the rule's profile is flat: the ordinary comparison has no r.
    const rule = results.storyScores.filter((s) => s.readout === 'negint/yesno/rule');
    expect(rule.every((s) => s.s === 0.5)).toBe(true);
    expect(results.comparisons.find((x) => x.readout_b === 'negint/yesno/rule')?.r).toBeNull();
  });

  it('pairs each judge reading with its rule reading, and nothing else', () => {
    expect(
      sameReplyPairs([
        'plain/yesno/rule [with judge:a]',
        'plain/yesno/judge:a [with rule]',
        'plain/verdict/judge:a [with rule+]',
        'plain/verdict/rule+ [with judge:a]',
        'plain/verdict/judge:a [with rule]',
        'plain/yesno/rule',
      ]),
    ).toEqual([
      ['plain/verdict/judge:a [with rule+]', 'plain/verdict/rule+ [with judge:a]'],
      ['plain/yesno/judge:a [with rule]', 'plain/yesno/rule [with judge:a]'],
    ]);
  });
});
