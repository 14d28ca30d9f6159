import { describe, expect, it } from 'vitest';
import { habitAnalysis, habitModelMeans, habitVariance, signChanges, twoWayShares } from '../../../../lib/batteries/far6/analysis/habits.js';
import type { CellHabit } from '../../../../lib/batteries/far6/analysis/types.js';

function habit(model: string, language: string, readout: string, b: number, second: number | null = null): CellHabit {
  return { model, language, readout, n_stories: 10, keying_bias: b, second_listed_pref: second, n_stories_position: second === null ? 0 : 10, named_term_pull: null };
}

describe('twoWayShares (Same Judgment, Different Yes §6)', () => {
  it('splits an additive matrix into model and language shares (by hand)', () => {
    // Row means 1.5, 3.5; column means 2, 3; grand 2.5. SS: model 2·(1 + 1) = 4, language 2·(¼ + ¼) = 1, total 5.
    const s = twoWayShares([[1, 2], [3, 4]]);
    expect(s.grand).toBe(2.5);
    expect(s.model).toBeCloseTo(0.8, 12);
    expect(s.language).toBeCloseTo(0.2, 12);
    expect(s.interaction).toBeCloseTo(0, 12);
  });

  it('gives all variance to the interaction for a crossed pattern', () => {
    const s = twoWayShares([[1, -1], [-1, 1]]);
    expect(s).toEqual({ grand: 0, model: 0, language: 0, interaction: 1 });
  });

  it('mixes, with the shares summing to one (by hand)', () => {
    // [[0, 0, 3], [0, 0, 0]]: grand ½; rows 1, 0; columns 0, 0, 1.5.
    // Total = 4·¼ + (2.5)² + ¼ = 7.5; model 3·2·¼ = 1.5; language 2·(2·¼ + 1) = 3; interaction 3.
    const s = twoWayShares([[0, 0, 3], [0, 0, 0]]);
    expect(s.model).toBeCloseTo(0.2, 12);
    expect(s.language).toBeCloseTo(0.4, 12);
    expect(s.interaction).toBeCloseTo(0.4, 12);
  });

  it('has no shares without variance or below 2 × 2', () => {
    expect(twoWayShares([[0.1, 0.1], [0.1, 0.1]])).toEqual({ grand: 0.1, model: null, language: null, interaction: null });
    expect(twoWayShares([[1, 2, 3]])).toMatchObject({ grand: 2, interaction: null });
    expect(twoWayShares([])).toEqual({ grand: null, model: null, language: null, interaction: null });
    expect(() => twoWayShares([[1, 2], [3]])).toThrow(RangeError);
  });
});

describe('habitVariance', () => {
  it('drops cells to complete the matrix, keeping the larger complete part, and names them', () => {
    const R = 'plain/yesno/rule';
    const rows = [
      habit('A', 'en', R, 1), habit('A', 'de', R, 2),
      habit('B', 'en', R, 3), habit('B', 'de', R, 4),
      habit('C', 'en', R, 9), // C lacks de: models A, B × en, de (4 cells) beat A, B, C × en (3)
    ];
    const [v] = habitVariance(rows);
    expect(v).toMatchObject({ readout: R, habit: 'keying_bias', n_models: 2, n_languages: 2, dropped: 'C/en', grand_mean: 2.5 });
    expect(v?.interaction_share).toBeCloseTo(0, 12);
    expect(v?.model_share).toBeCloseTo(0.8, 12);
  });

  it('splits the second-listed preference on label readouts too', () => {
    const L = 'plain/label/rule';
    const v = habitVariance([habit('A', 'en', L, 0, 1), habit('A', 'de', L, 0, -1), habit('B', 'en', L, 0, -1), habit('B', 'de', L, 0, 1)]);
    expect(v.map((x) => x.habit)).toEqual(['keying_bias', 'second_listed_pref']);
    expect(v[0]?.interaction_share).toBeNull();
    expect(v[1]?.interaction_share).toBeCloseTo(1, 12);
  });
});

describe('habitModelMeans (Same Judgment, Different Yes Figure 4)', () => {
  it('averages each habit over a model\'s languages, with the lowest and highest', () => {
    const L = 'plain/label/rule';
    const rows = [habit('A', 'en', L, 0.1, 0.02), habit('A', 'de', L, 0.3, 0.06), habit('B', 'en', L, -0.2)];
    const m = habitModelMeans(rows.map((h) => ({ ...h, named_term_pull: h.keying_bias })));
    expect(m.find((x) => x.model === 'A' && x.habit === 'keying_bias')).toMatchObject({ n_languages: 2, min: 0.1, max: 0.3 });
    expect(m.find((x) => x.model === 'A' && x.habit === 'keying_bias')?.mean).toBeCloseTo(0.2, 12);
    expect(m.find((x) => x.model === 'A' && x.habit === 'second_listed_pref')?.mean).toBeCloseTo(0.04, 12);
    // B has no second-listed preference: no row for it.
    expect(m.filter((x) => x.model === 'B').map((x) => x.habit)).toEqual(['keying_bias', 'named_term_pull']);
  });
});

describe('signChanges (Same Judgment, Different Yes §6)', () => {
  it('counts cells whose b changes sign under negation, per reader, zero apart', () => {
    const rows = [
      habit('A', 'en', 'plain/yesno/rule', -0.1), habit('A', 'en', 'negint/yesno/rule', 0.05),
      habit('A', 'de', 'plain/yesno/rule', -0.1), habit('A', 'de', 'negint/yesno/rule', -0.2),
      habit('B', 'en', 'plain/yesno/rule', 0), habit('B', 'en', 'negint/yesno/rule', 0.3),
      habit('B', 'de', 'plain/yesno/rule', -0.1), // no negint cell
      habit('A', 'en', 'plain/yesno/judge:j', -0.05), habit('A', 'en', 'negint/yesno/judge:j', -0.04),
      habit('A', 'en', 'plain/label/rule', 0.1),
    ];
    const { rows: cells, counts } = signChanges(rows);
    expect(cells.map((c) => [c.readout_a, c.model, c.language, c.changed])).toEqual([
      ['plain/yesno/judge:j', 'A', 'en', false],
      ['plain/yesno/rule', 'A', 'de', false],
      ['plain/yesno/rule', 'A', 'en', true],
      ['plain/yesno/rule', 'B', 'en', null],
    ]);
    expect(counts).toEqual(
      expect.arrayContaining([
        { readout_a: 'plain/yesno/rule', readout_b: 'negint/yesno/rule', n_cells: 3, n_changed: 1, n_zero: 1 },
        { readout_a: 'plain/yesno/judge:j', readout_b: 'negint/yesno/judge:j', n_cells: 1, n_changed: 0, n_zero: 0 },
      ]),
    );
    expect(habitAnalysis(rows).signChangeCounts).toHaveLength(2);
  });
});
