import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeCampaign } from '../../../../lib/batteries/far6/analysis/analyzeCampaign.js';
import { AnalysisError } from '../../../../lib/query/errors.js';
import { agreementStats, judgeAuditAnalysis, parseJudgeAuditRows, runJudgeAudit, wilsonInterval } from '../../../../lib/batteries/far6/analysis/judgeAudit.js';
import { studyCsvFiles, studySummarySections } from '../../../../lib/batteries/far6/report/studyReport.js';
import type { JudgeAuditPairRow, JudgeAuditRow } from '../../../../lib/batteries/far6/analysis/types.js';
import { ParquetFixture } from './fixtures.js';

/** `n` copies of a (primary, audit) pair. */
function times(n: number, a: string, b: string): [string, string][] {
  return Array.from({ length: n }, () => [a, b] as [string, string]);
}

describe('agreementStats: percent agreement and Cohen\'s kappa on hand-computed tables', () => {
  it('a 2 × 2 table: p_o = 35/50, p_e = (25·30 + 25·20)/50² = 0.5, kappa = 0.4', () => {
    const s = agreementStats([...times(20, 'P', 'P'), ...times(5, 'P', 'notP'), ...times(10, 'notP', 'P'), ...times(15, 'notP', 'notP')]);
    expect(s.n).toBe(50);
    expect(s.n_agree).toBe(35);
    expect(s.agreement).toBe(0.7);
    expect(s.kappa).toBeCloseTo(0.4, 12);
    expect(s.kappa_note).toBe('');
    expect(s.n_primary_decisive).toBe(50);
    expect(s.n_both_decisive).toBe(50);
    expect(s.n_opposite).toBe(15);
  });

  it('four categories: kappa = (4·3 − 5) / (16 − 5) = 7/11; only P against notP counts as opposite', () => {
    const s = agreementStats([['P', 'P'], ['notP', 'notP'], ['P', 'notP'], ['none', 'none'], ['P', 'both']]);
    // primary P 3, notP 1, none 1; audit P 1, notP 2, none 1, both 1; Σ a_k b_k = 3 + 2 + 1 = 6; n = 5, agree 3.
    expect(s.n).toBe(5);
    expect(s.agreement).toBeCloseTo(0.6, 12);
    expect(s.kappa).toBeCloseTo((5 * 3 - 6) / (25 - 6), 12);
    expect(s.n_primary_decisive).toBe(4);
    expect(s.n_both_decisive).toBe(3);
    expect(s.n_opposite).toBe(1);
    const t = agreementStats([['P', 'P'], ['notP', 'notP'], ['P', 'notP'], ['none', 'none']]);
    expect(t.kappa).toBeCloseTo(7 / 11, 12);
  });

  it('perfect agreement over two or more categories: kappa = 1', () => {
    const s = agreementStats([...times(3, 'P', 'P'), ...times(2, 'both', 'both'), ['none', 'none']]);
    expect(s.agreement).toBe(1);
    expect(s.kappa).toBe(1);
    expect(s.n_opposite).toBe(0);
  });

  it('agreement at chance level: kappa = 0; below chance: negative', () => {
    const chance = agreementStats([['P', 'P'], ['P', 'notP'], ['notP', 'P'], ['notP', 'notP']]);
    expect(chance.agreement).toBe(0.5);
    expect(chance.kappa).toBe(0);
    expect(chance.n_opposite).toBe(2);
    // One reading constant, the other varied: p_o = p_e = 2/4, so kappa is defined and 0.
    const constant = agreementStats([['P', 'P'], ['P', 'P'], ['P', 'notP'], ['P', 'none']]);
    expect(constant.kappa).toBe(0);
    expect(agreementStats([['P', 'notP'], ['notP', 'P']]).kappa).toBe(-1);
  });

  it('every reply in one and the same category: agreement 1, kappa undefined (null) with the reason', () => {
    const s = agreementStats(times(6, 'none', 'none'));
    expect(s.agreement).toBe(1);
    expect(s.kappa).toBeNull();
    expect(s.kappa_note).toBe('both readings put every reply in one category (none): chance agreement is 1 and kappa is 0/0');
  });

  it('leaves out pairs outside the codebook; without pairs everything is null', () => {
    const s = agreementStats([['P', 'invalid'], ['invalid', 'P'], ['P', 'P'], ['notP', 'notP']]);
    expect(s.n).toBe(2);
    expect(s.kappa).toBe(1);
    const none = agreementStats([['P', 'invalid']]);
    expect(none).toMatchObject({ n: 0, agreement: null, agreement_low: null, agreement_high: null, kappa: null, kappa_note: 'no reply with a codebook label from both readings' });
  });

  it('the Wilson interval matches hand computation and stays inside [0, 1]', () => {
    const [lo, hi] = wilsonInterval(95, 100)!;
    expect(lo).toBeCloseTo(0.88825, 4);
    expect(hi).toBeCloseTo(0.97846, 4);
    expect(wilsonInterval(10, 10)![1]).toBeLessThanOrEqual(1);
    expect(wilsonInterval(0, 4)).toEqual([0, expect.closeTo(0.48989, 4)]);
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

function row(over: Partial<JudgeAuditPairRow> & { item_id: string }): JudgeAuditPairRow {
  return {
    phase: 'audit-second',
    model: 'alpha',
    language: 'en',
    constraint: 'free',
    form: 'plain',
    audit_reader: 'judge:j2',
    audit_label: 'P',
    primary_reader: 'judge:j1',
    primary_label: 'P',
    ...over,
  };
}

describe('judgeAuditAnalysis: strata and pooled levels', () => {
  const rows: JudgeAuditPairRow[] = [
    row({ item_id: 'a', audit_label: 'P', primary_label: 'P' }),
    row({ item_id: 'b', audit_label: 'notP', primary_label: 'P' }),
    row({ item_id: 'c', audit_label: 'notP', primary_label: 'notP', language: 'de' }),
    row({ item_id: 'd', audit_label: 'invalid', primary_label: 'none', constraint: 'yesno' }),
    row({ item_id: 'e', audit_label: 'both', primary_label: 'both', constraint: 'yesno' }),
    // The retest: the audit reader is the primary judge itself; the item also has the other judge's reading.
    row({ phase: 'audit-retest', item_id: 'a', audit_reader: 'judge:j1', audit_label: 'P', primary_reader: 'judge:j1', primary_label: 'P' }),
    row({ phase: 'audit-retest', item_id: 'a', audit_reader: 'judge:j1', audit_label: 'P', primary_reader: 'judge:j0', primary_label: 'none' }),
  ];
  const find = (out: readonly JudgeAuditRow[], c: Partial<JudgeAuditRow>) =>
    out.find((r) => Object.entries(c).every(([k, v]) => r[k as keyof JudgeAuditRow] === v));

  it('pools each comparison over all, model, language, constraint and stratum', () => {
    const out = judgeAuditAnalysis(rows).rows;
    const all = find(out, { comparison: 'second', level: 'all' });
    expect(all).toMatchObject({ primary_reader: 'judge:j1', audit_reader: 'judge:j2', model: '*', n_sampled: 5, n_unlabeled: 1, n: 4, n_agree: 3, n_opposite: 1, n_primary_decisive: 3 });
    expect(find(out, { comparison: 'second', level: 'language', language: 'de' })).toMatchObject({ n: 1, kappa: null });
    expect(find(out, { comparison: 'second', level: 'constraint', constraint: 'yesno' })).toMatchObject({ n_sampled: 2, n: 1 });
    const stratum = find(out, { comparison: 'second', level: 'stratum', model: 'alpha', language: 'en', constraint: 'free' });
    expect(stratum).toMatchObject({ n: 2, n_agree: 1, agreement: 0.5, n_opposite: 1 });
    expect(out.filter((r) => r.comparison === 'second' && r.level === 'stratum')).toHaveLength(3);
    // Sorted: comparison, then level order.
    expect(out.map((r) => `${r.comparison}/${r.level}`).slice(0, 2)).toEqual(['retest/all', 'retest/model']);
  });

  it('the retest pairs the primary judge with itself, even where another judge read the item', () => {
    const retest = judgeAuditAnalysis(rows).rows.find((r) => r.comparison === 'retest' && r.level === 'all');
    expect(retest).toMatchObject({ primary_reader: 'judge:j1', audit_reader: 'judge:j1', n: 1, n_agree: 1 });
  });

  it('asks for primaryReader where the primary judge is ambiguous, and uses it when given', () => {
    const ambiguous = [row({ item_id: 'x', primary_reader: 'judge:j0' }), row({ item_id: 'x', primary_reader: 'judge:j1', primary_label: 'notP' })];
    expect(() => judgeAuditAnalysis(ambiguous)).toThrow(AnalysisError);
    expect(() => judgeAuditAnalysis(ambiguous)).toThrow(/item x has several sentence-judge readings \(judge:j0, judge:j1\).*pass primaryReader/);
    const out = judgeAuditAnalysis(ambiguous, { primaryReader: 'judge:j1' }).rows.find((r) => r.level === 'all');
    expect(out).toMatchObject({ primary_reader: 'judge:j1', n: 1, n_agree: 0, n_opposite: 1 });
  });

  it('counts an audit reading without a primary reading as unlabeled', () => {
    const out = judgeAuditAnalysis([row({ item_id: 'y', primary_reader: null, primary_label: null })]).rows.find((r) => r.level === 'all');
    expect(out).toMatchObject({ n_sampled: 1, n: 0, n_unlabeled: 1, agreement: null });
  });

  it('reports rows outside the SQL contract with their index and column', () => {
    expect(() => parseJudgeAuditRows([{ ...row({ item_id: 'z' }), constraint: 'essay' }])).toThrow(/judge_audit\.sql: rows\[0\]\.constraint: expected one of free, verdict, yesno, label, got "essay"/);
  });
});

describe('judge_audit.sql on Parquet, through analyzeCampaign', () => {
  let fx: ParquetFixture;
  beforeAll(async () => {
    fx = await ParquetFixture.create();
    const items = ['i1', 'i2', 'i3', 'i4'];
    await fx.prompts(items.map((id, i) => ({ item_id: id, prompt_key: `k${id}`, model: 'alpha', language: 'en', story: `s${i}`, named: 'P', constraint: i < 2 ? 'free' : 'verdict', form: 'plain' })));
    await fx.replies(items.map((id) => ({ item_id: id, model: 'alpha', language: 'en', attempt: 1, status: 'ok', created_at: '2026-01-01T00:00:00Z' })));
    const primary = { i1: 'P', i2: 'notP', i3: 'P', i4: 'none' } as const;
    const reading = (phase: string, id: string, reader: string, label: string, judgeItem: string | null) => ({
      item_id: id, model: 'alpha', language: 'en', campaign: 'test', phase, reader, label, raw: null, judge_item_id: judgeItem,
    });
    // One part file: the generate readings and the audit readings, told apart by phase. i2 is
    // flipped by the second judge; i4 is re-judged twice (the first by judge_item_id counts).
    await fx.write('readings', [
      ...items.map((id) => reading('generate', id, 'judge:j1', primary[id as keyof typeof primary], `j-${id}`)),
      ...items.map((id) => reading('generate', id, 'rule', 'P', null)),
      ...[['i1', 'P'], ['i2', 'P'], ['i3', 'P'], ['i4', 'none']].map(([id, label]) => reading('audit-second', id!, 'judge:j2', label!, `s-${id}`)),
      reading('audit-second', 'i4', 'judge:j2', 'P', 's-z'),
      ...[['i1', 'P'], ['i2', 'notP'], ['i3', 'both']].map(([id, label]) => reading('audit-retest', id!, 'judge:j1', label!, `r-${id}`)),
    ]);
  });
  afterAll(() => fx.close());

  it('pairs every audit reading with the primary reading of the same item, one per phase and reader', async () => {
    const pairs = await runJudgeAudit(fx.db, fx.tables);
    expect(pairs.map((p) => [p.phase, p.item_id, p.constraint, p.audit_label, p.primary_reader, p.primary_label])).toEqual([
      ['audit-retest', 'i1', 'free', 'P', 'judge:j1', 'P'],
      ['audit-retest', 'i2', 'free', 'notP', 'judge:j1', 'notP'],
      ['audit-retest', 'i3', 'verdict', 'both', 'judge:j1', 'P'],
      ['audit-second', 'i1', 'free', 'P', 'judge:j1', 'P'],
      ['audit-second', 'i2', 'free', 'P', 'judge:j1', 'notP'],
      ['audit-second', 'i3', 'verdict', 'P', 'judge:j1', 'P'],
      ['audit-second', 'i4', 'verdict', 'none', 'judge:j1', 'none'],
    ]);
  });

  it('adds judgeAudit to the results, leaves the main readouts alone, and writes judge_audit.csv', async () => {
    // The main analysis reads the generate readings only, as the run lays them out.
    const main = { ...fx.tables, readings: `(SELECT * FROM ${fx.tables.readings} WHERE phase = 'generate')` };
    const plain = await analyzeCampaign(fx.db, main);
    expect(plain.judgeAudit).toBeUndefined();
    const results = await analyzeCampaign(fx.db, main, { judgeAudit: { readings: fx.tables.readings, primaryReader: 'judge:j1' } });
    const second = results.judgeAudit?.rows.find((r) => r.comparison === 'second' && r.level === 'all');
    // primary P, notP, P, none; second P, P, P, none: agree 3 of 4; Σ a_k b_k = 2·3 + 1·1 = 7; kappa = (4·3 − 7)/(16 − 7) = 5/9.
    expect(second).toMatchObject({ n: 4, n_agree: 3, n_opposite: 1, n_primary_decisive: 3 });
    expect(second?.kappa).toBeCloseTo(5 / 9, 12);
    expect(results.cellSummary).toEqual(plain.cellSummary);
    const csv = new Map(studyCsvFiles(results)).get('judge_audit.csv') ?? '';
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe(
      'comparison,primary_reader,audit_reader,level,model,language,constraint,n_sampled,n_unlabeled,n,n_agree,agreement,agreement_low,agreement_high,kappa,kappa_note,n_primary_decisive,n_both_decisive,n_opposite',
    );
    expect(lines).toContain('second,judge:j1,judge:j2,stratum,alpha,en,verdict,2,0,2,2,1,0.34238,1,1,,1,1,0');
    expect(results.cellSummary.map((c) => c.reader)).not.toContain('judge:j2');
    const md = studySummarySections(results).join('\n\n');
    expect(md).toContain('## Judge audit');
    expect(md).toContain('| comparison | primary | audit | group | replies | agreement [95 %] | kappa | primary decisive | opposite decisive |');
    expect(md).toContain('| second | judge:j1 | judge:j2 | all | 4 | 75.0 % [');
  });
});
