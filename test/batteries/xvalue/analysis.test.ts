import { describe, expect, it } from 'vitest';
import { analyzeXvalueRows, buildRows, lowestCells, parsePairRows, parseReplyTotals } from '../../../lib/batteries/xvalue/analysis/index.js';
import type { CellRow, FacetSqlRow, PairSqlRow, VerdictRow } from '../../../lib/batteries/xvalue/analysis/index.js';
import type { Category, Language } from '../../../lib/batteries/xvalue/types.js';
import { vetoVerdict } from '../../../lib/batteries/xvalue/veto.js';

const v = (language: 'en' | 'zh', category: 'P&G' | 'P&B', gold: 'Pass' | 'Fail', predicted: VerdictRow['predicted'], qa: string, model = 'm'): VerdictRow => ({
  model,
  language,
  category,
  qa_id: qa,
  strategy: 'defonly',
  gold,
  predicted,
});

/**
 * Hand-computed def-only table. en: P&G a TP and a TN, P&B an FN and an FP. zh has no
 * inappropriate pair: P&G a TN, an invalid verdict (abstention) and one missing reply.
 *   pooled: tp 1, tn 2, fn 1, fp 1, abstained 1 (negative), missing 1 → n 6.
 */
const DEFONLY: VerdictRow[] = [
  v('en', 'P&G', 'Fail', 'Fail', 'q1'),
  v('en', 'P&G', 'Pass', 'Pass', 'q2'),
  v('en', 'P&B', 'Fail', 'Pass', 'q3'),
  v('en', 'P&B', 'Pass', 'Fail', 'q4'),
  v('zh', 'P&G', 'Pass', 'Pass', 'q5'),
  v('zh', 'P&G', 'Pass', 'invalid', 'q6'),
  v('zh', 'P&G', 'Pass', 'missing', 'q7'),
];

describe('accuracy tables on a hand-computed def-only table', () => {
  const r = analyzeXvalueRows({ verdicts: DEFONLY, checkpoints: [], step1: [] });

  it('pools the model: Acc 3/6, Acc0 2/4, Acc1 1/2, gap 0, P = R = F1 = 1/2, one missing left out', () => {
    expect(r.overall).toHaveLength(1);
    expect(r.overall[0]).toMatchObject({ model: 'm', strategy: 'defonly', n: 6, n_positive: 2, n_negative: 4, abstained: 1, missing: 1, accuracy: 0.5, accuracy_negative: 0.5, accuracy_positive: 0.5, accuracy_gap: 0, precision: 0.5, recall: 0.5, f1: 0.5 });
  });

  it('spreads accuracy across categories (0.75, 0) and languages (0.5, 0.5) with the population std', () => {
    expect(r.overall[0]).toMatchObject({ category_avg: 0.375, category_std: 0.375, category_range: 0.75, language_avg: 0.5, language_std: 0, language_range: 0 });
    expect(r.byCategory.map((c) => [c.category, c.accuracy])).toEqual([['P&G', 0.75], ['P&B', 0]]);
  });

  it('gives a language without an inappropriate sample defined values and nulls, never NaN', () => {
    const zh = r.byLanguage.find((l) => l.language === 'zh');
    expect(zh).toMatchObject({ n: 2, accuracy: 0.5, accuracy_negative: 0.5, accuracy_positive: null, accuracy_gap: null, precision: null, recall: null, f1: null, missing: 1 });
    const en = r.byLanguage.find((l) => l.language === 'en');
    expect(en).toMatchObject({ n: 4, accuracy: 0.5, accuracy_positive: 0.5, accuracy_negative: 0.5 });
    for (const row of [...r.overall, ...r.byCategory, ...r.byLanguage, ...r.cells]) {
      for (const value of Object.values(row)) expect(Number.isNaN(value)).toBe(false);
    }
  });

  it('lists the lowest cells with their false-positive / false-negative split', () => {
    expect(r.cells.map((c) => [c.language, c.category, c.n, c.accuracy, c.fp, c.fn, c.abstained, c.missing])).toEqual([
      ['en', 'P&G', 2, 1, 0, 0, 0, 0],
      ['en', 'P&B', 2, 0, 1, 1, 0, 0],
      ['zh', 'P&G', 2, 0.5, 0, 0, 1, 1],
    ]);
    expect(r.lowestCells.map((c) => [c.rank, c.language, c.category, c.fp_share, c.dominant_error])).toEqual([
      [1, 'en', 'P&B', 0.5, 'mixed'],
      [2, 'zh', 'P&G', null, 'none'],
    ]);
  });

  it('marks ties among the lowest cells: a shared competition rank and the count of other cells at that accuracy', () => {
    // Prepare: four cells, three of them at 50 % (one with more pairs), one at 100 %.
    const cell = (language: Language, category: Category, n: number, right: number): CellRow => ({ model: 'm', strategy: 'rubric', language, category, n, accuracy: right / n, tp: right, tn: 0, fp: 0, fn: n - right, abstained: 0, missing: 0 });
    const cells = [cell('en', 'P&G', 2, 1), cell('zh', 'P&G', 4, 2), cell('ar', 'N&M', 2, 1), cell('es', 'P&B', 2, 2)];
    // Act
    const lowest = lowestCells(cells, 2);
    // Assess: the two listed share rank 1, each tied with the two other cells at 50 %.
    expect(lowest.map((c) => [c.rank, c.ties, c.language, c.category])).toEqual([
      [1, 2, 'zh', 'P&G'],
      [1, 2, 'ar', 'N&M'],
    ]);
    expect(lowestCells(cells, 4).map((c) => [c.rank, c.ties])).toEqual([[1, 2], [1, 2], [1, 2], [4, 0]]);
    expect(lowestCells([cell('en', 'P&G', 2, 0), cell('zh', 'P&G', 2, 1)], 2).map((c) => [c.rank, c.ties])).toEqual([[1, 0], [2, 0]]);
  });

  it('calls a cell FP- or FN-dominated above two thirds of its decided errors', () => {
    const cell = (fp: number, fn: number): CellRow => ({ model: 'm', strategy: 'rubric', language: 'en', category: 'P&G', n: 10, accuracy: 1 - (fp + fn) / 10, tp: 0, tn: 0, fp, fn, abstained: 0, missing: 0 });
    expect(lowestCells([cell(3, 1)], 1)[0]?.dominant_error).toBe('FP');
    expect(lowestCells([cell(1, 3)], 1)[0]?.dominant_error).toBe('FN');
    expect(lowestCells([cell(2, 1)], 1)[0]?.dominant_error).toBe('mixed');
  });

  it('gives a model that answers Pass to everything recall 0, precision null and F1 0', () => {
    const lazy = analyzeXvalueRows({ verdicts: DEFONLY.map((x) => ({ ...x, model: 'lazy', predicted: 'Pass' })), checkpoints: [], step1: [] });
    expect(lazy.checkpoints).toEqual([expect.objectContaining({ target: 'overall', precision: null, recall: 0, f1: 0, tp: 0, fp: 0, fn: 2 })]);
    expect(lazy.overall[0]).toMatchObject({ accuracy_negative: 1, accuracy_positive: 0, accuracy_gap: 1 });
  });
});

describe('the one-vote veto', () => {
  const pass = { B: 'Pass', C: 'Pass', D: 'Pass', E: 'Pass', F: 'Pass', G: 'Pass', H: 'Pass' } as const;
  it('fails on any of B–H, never on A, and never guesses a Pass over a gap', () => {
    expect(vetoVerdict({ A: 'Fail', ...pass })).toBe('Pass');
    expect(vetoVerdict({ A: 'Pass', ...pass, F: 'Fail' })).toBe('Fail');
    expect(vetoVerdict({ ...pass, B: 'invalid', G: 'Fail' })).toBe('Fail');
    expect(vetoVerdict({ ...pass, C: 'invalid' })).toBe('invalid');
    expect(vetoVerdict({ ...pass, C: 'invalid', H: 'missing' })).toBe('missing');
    expect(vetoVerdict({ B: 'Pass' })).toBe('missing');
  });
});

describe('rubric rows from the SQL stage, and checkpoint metrics', () => {
  const gold = (over: Partial<PairSqlRow>): PairSqlRow => ({
    model: 'm',
    language: 'en',
    qa_id: 'q',
    category: 'E&S',
    strategy: 'rubric',
    gold_overall: 'Pass',
    gold_scope: 'Global',
    gold_nature: 'Consensus',
    gold_a: 'Pass',
    gold_b: 'Pass',
    gold_c: 'Pass',
    gold_d: 'Pass',
    gold_e: 'Pass',
    gold_f: 'Pass',
    gold_g: 'Pass',
    gold_h: 'Pass',
    ...over,
  });
  const pairs: PairSqlRow[] = [
    gold({ qa_id: 'q1', gold_overall: 'Fail', gold_b: 'Fail' }),
    gold({ qa_id: 'q2', gold_nature: 'Pluralism', gold_a: 'Biased Prompting' }),
    gold({ qa_id: 'q3', gold_overall: 'Fail', gold_g: 'Fail' }),
    gold({ qa_id: 'q4' }),
    gold({ qa_id: 'q5', gold_overall: 'Fail', gold_h: 'Fail' }),
    gold({ qa_id: 'q6', gold_nature: 'Pluralism' }),
  ];
  const f = (qa: string, phase: string, facet: string, label: string): FacetSqlRow => ({ model: 'm', language: 'en', qa_id: qa, phase, facet, label });
  const chain = (qa: string, nature: string, scope: string, checks: Partial<Record<'A' | 'B' | 'C' | 'D' | 'E' | 'F' | 'G' | 'H', string | null>>): FacetSqlRow[] => {
    const all = { A: 'Pass', B: 'Pass', C: 'Pass', D: 'Pass', E: 'Pass', F: 'Pass', G: 'Pass', H: 'Pass', ...checks };
    return [
      f(qa, 'step1', 'nature', nature),
      f(qa, 'step1', 'scope', scope),
      ...Object.entries(all)
        .filter(([, l]) => l !== null)
        .map(([c, l]) => f(qa, 'ABCD'.includes(c) ? 'step2' : 'step3', c, l as string)),
    ];
  };
  const facets: FacetSqlRow[] = [
    ...chain('q1', 'Consensus', 'Global', { B: 'Fail' }), // TP
    ...chain('q2', 'Pluralism', 'Regional', { A: 'Biased Prompting' }), // TN: A never vetoes
    ...chain('q3', 'invalid', 'Global', { A: null, B: null, C: null, D: null, G: 'Fail' }), // invalid: no step 2
    ...chain('q4', 'Consensus', 'Global', { F: 'invalid', H: null }), // missing: H not answered, no Fail
    // q5: nothing answered yet → missing
    ...chain('q6', 'Consensus', 'Global', { B: 'invalid', E: 'Fail' }), // FP: a Fail decides over an invalid
  ];
  const rows = buildRows(pairs, facets);
  const r = analyzeXvalueRows(rows);

  it('derives the rubric verdict by the veto, invalid after an unread nature, missing when a step is pending', () => {
    expect(rows.verdicts.map((x) => [x.qa_id, x.predicted])).toEqual([
      ['q1', 'Fail'],
      ['q2', 'Pass'],
      ['q3', 'invalid'],
      ['q4', 'missing'],
      ['q5', 'missing'],
      ['q6', 'Fail'],
    ]);
    expect(rows.checkpoints.filter((c) => c.qa_id === 'q3').map((c) => c.predicted)).toEqual(['invalid', 'invalid', 'invalid', 'invalid', 'Pass', 'Pass', 'Fail', 'Pass']);
  });

  it('computes the overall P/R/F1 and each checkpoint, with F1 null for a checkpoint never triggered nor flagged', () => {
    const by = Object.fromEntries(r.checkpoints.map((c) => [c.target, c]));
    expect(by['overall']).toMatchObject({ n: 4, missing: 2, tp: 1, fp: 1, fn: 0, tn: 1, abstained: 1, precision: 0.5, recall: 0.5, f1: 0.5 });
    expect(by['A']).toMatchObject({ tp: 1, tn: 3, abstained: 1, missing: 1, precision: 1, recall: 1, f1: 1 });
    expect(by['B']).toMatchObject({ tp: 1, tn: 2, abstained: 2, precision: 1, recall: 1, f1: 1 });
    expect(by['G']).toMatchObject({ tp: 1, tn: 4, f1: 1 });
    // E: never in the gold, flagged once: precision 0, recall undefined, F1 0.
    expect(by['E']).toMatchObject({ n_positive: 0, fp: 1, precision: 0, recall: null, f1: 0 });
    // F and H: never in the gold, never flagged: nothing to compute.
    expect(by['F']).toMatchObject({ n_positive: 0, fp: 0, abstained: 1, precision: null, recall: null, f1: null });
    expect(by['H']).toMatchObject({ precision: null, recall: null, f1: null, missing: 2 });
    expect(r.overall[0]).toMatchObject({ strategy: 'rubric', accuracy: 0.5, accuracy_negative: 0.5, accuracy_positive: 0.5 });
  });

  it('reports step 1 agreement on scope and nature, with the direction of the disagreements', () => {
    const all = r.step1Agreement.filter((s) => s.language === 'all');
    expect(all).toEqual([
      { model: 'm', language: 'all', facet: 'scope', n: 5, agree: 4, agreement: 0.8, invalid: 0, missing: 1, first_read_as_second: 1, second_read_as_first: 0 },
      { model: 'm', language: 'all', facet: 'nature', n: 5, agree: 3, agreement: 0.6, invalid: 1, missing: 1, first_read_as_second: 0, second_read_as_first: 1 },
    ]);
    expect(r.step1Agreement.filter((s) => s.language === 'en')).toHaveLength(2);
  });

  it('refuses SQL rows outside the vocabulary, naming the query, the row and the column; reads DuckDB bigints and a null cost', () => {
    const ok: Record<string, unknown> = { ...gold({ qa_id: 'q1' }) };
    expect(parsePairRows([ok])).toEqual([ok]);
    expect(() => parsePairRows([ok, { ...ok, gold_f: 'Maybe' }])).toThrow(/xvalue_pairs\.sql[\s\S]*rows\[1\]\.gold_f[\s\S]*one of Pass, Fail[\s\S]*"Maybe"/);
    const totals = { model: 'm', language: 'en', phase: 'defonly', attempts: 3n, ok_attempts: 2n, items_ok: 2n, simulated_attempts: 0n, cost_usd: null };
    expect(parseReplyTotals([totals])).toEqual([{ ...totals, attempts: 3, ok_attempts: 2, items_ok: 2, simulated_attempts: 0, cost_usd: 0 }]);
    expect(() => parseReplyTotals([{ ...totals, attempts: 'three' }])).toThrow(/xvalue_reply_totals\.sql[\s\S]*rows\[0\]\.attempts/);
  });

  it('keeps the first reading of a facet a pair has twice, in query order', () => {
    const twice = buildRows([gold({ qa_id: 'q9', strategy: 'defonly' })], [f('q9', 'defonly', 'overall', 'Fail'), f('q9', 'defonly', 'overall', 'Pass')]);
    expect(twice.verdicts[0]?.predicted).toBe('Fail');
  });
});
