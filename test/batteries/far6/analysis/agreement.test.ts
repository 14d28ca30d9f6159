import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agreementAnalysis, parseAgreementRows, polarityShares, renderAgreementSql, replyDisagreement, runReadingAgreement } from '../../../../lib/batteries/far6/analysis/agreement.js';
import { analyzeCampaign } from '../../../../lib/batteries/far6/analysis/analyzeCampaign.js';
import { writeResults } from '../../../../lib/batteries/far6/report/report.js';
import type { AnalysisResults, ReadingAgreementRow } from '../../../../lib/batteries/far6/analysis/types.js';
import { CampaignFileError } from '../../../../lib/errors.js';
import { fixtureRows, ParquetFixture } from './fixtures.js';

/**
 * By hand. alpha/en, negative interrogative, yes/no: wrong-right named P (evaluative adjective):
 * (rule, judge) = (P, P), (P, notP), (notP, notP), (P, both) → 3 decisive, 2 agree; oppose-support
 * named notP (attitude verb): (P, notP), (notP, P) → 2 decisive, 0 agree. Plain: (P, P), (notP,
 * notP). beta/en, negative interrogative, wrong-right named P: (P, P), (notP, notP), an item whose
 * only attempt failed, and an item judged twice (the first judge_item_id, P, counts) with rule P.
 */
describe('reading_agreement.sql on Parquet', () => {
  let fx: ParquetFixture;
  let rows: ReadingAgreementRow[];
  let results: AnalysisResults;

  beforeAll(async () => {
    fx = await ParquetFixture.create();
    const input = fixtureRows();
    const { prompts, replies, readings } = input;
    let n = 0;
    const item = (
      model: string,
      form: string,
      pair: string,
      construction: string,
      named: 'P' | 'notP',
      labels: [string, ...string[]],
      rule: string,
      ok = true,
    ): void => {
      const id = `i${n++}`;
      const cell = { model, language: 'en' };
      prompts.push({ ...cell, item_id: id, prompt_key: id, story: `s${n}`, form, constraint: 'yesno', concept_pair: pair, construction, named });
      replies.push({ ...cell, item_id: id, attempt: 1, status: ok ? 'ok' : 'error', created_at: '2026-01-01T00:00:00Z' });
      readings.push({ ...cell, item_id: id, reader: 'rule', label: rule });
      labels.forEach((label, j) => readings.push({ ...cell, item_id: id, reader: 'judge:j', label, judge_item_id: `j${j}-${id}` }));
    };
    const adj = ['en.wrong-right', 'evaluative_adjective'] as const;
    const verb = ['en.oppose-support', 'attitude_verb'] as const;
    item('alpha', 'negint', ...adj, 'P', ['P'], 'P');
    item('alpha', 'negint', ...adj, 'P', ['notP'], 'P');
    item('alpha', 'negint', ...adj, 'P', ['notP'], 'notP');
    item('alpha', 'negint', ...adj, 'P', ['both'], 'P');
    item('alpha', 'negint', ...verb, 'notP', ['notP'], 'P');
    item('alpha', 'negint', ...verb, 'notP', ['P'], 'notP');
    item('alpha', 'plain', ...adj, 'P', ['P'], 'P');
    item('alpha', 'plain', ...adj, 'P', ['notP'], 'notP');
    item('beta', 'negint', ...adj, 'P', ['P'], 'P');
    item('beta', 'negint', ...adj, 'P', ['notP'], 'notP');
    item('beta', 'negint', ...adj, 'P', ['notP'], 'P', false);
    item('beta', 'negint', ...adj, 'P', ['P', 'notP'], 'P');
    await fx.writeAll(input);
    rows = await runReadingAgreement(fx.db, fx.tables);
    results = await analyzeCampaign(fx.db, fx.tables);
  });

  afterAll(async () => {
    await fx.close();
  });

  it('counts replies both readers read decisively, and their agreements', () => {
    const get = (model: string, form: string, pair: string) => rows.find((r) => r.model === model && r.form === form && r.concept_pair === pair);
    expect(rows.every((r) => r.reader_a === 'judge:j' && r.reader_b === 'rule')).toBe(true);
    expect(get('alpha', 'negint', 'en.wrong-right')).toMatchObject({ construction: 'evaluative_adjective', named: 'P', n_both_decisive: 3, n_agree: 2 });
    expect(get('alpha', 'negint', 'en.oppose-support')).toMatchObject({ construction: 'attitude_verb', named: 'notP', n_both_decisive: 2, n_agree: 0 });
    expect(get('alpha', 'plain', 'en.wrong-right')).toMatchObject({ n_both_decisive: 2, n_agree: 2 });
    expect(get('beta', 'negint', 'en.wrong-right')).toMatchObject({ n_both_decisive: 3, n_agree: 3 });
    expect(rows).toHaveLength(4);
  });

  it('gives reply-level disagreement per cell and its mean over cells (Figure 2b)', () => {
    const ag = results.agreement;
    expect(ag?.disagreement.find((d) => d.form === 'negint' && d.model === 'alpha')).toMatchObject({ n_both_decisive: 5, n_disagree: 3, disagreement: 0.6 });
    expect(ag?.disagreementSummary.find((d) => d.form === 'negint')).toMatchObject({ n_cells: 2, n_both_decisive: 8, min_disagreement: 0, max_disagreement: 0.6 });
    expect(ag?.disagreementSummary.find((d) => d.form === 'negint')?.mean_disagreement).toBeCloseTo(0.3, 12);
    expect(ag?.disagreementSummary.find((d) => d.form === 'plain')).toMatchObject({ n_cells: 1, mean_disagreement: 0 });
  });

  it('gives polarity shares of the negative-interrogative token (Same Judgment, Different Yes §7)', () => {
    const p = results.agreement?.polarity ?? [];
    const find = (level: string, f: Partial<Record<'model' | 'language' | 'construction' | 'wording', string>> = {}) =>
      p.find((x) => x.level === level && Object.entries(f).every(([k, v]) => x[k as 'model'] === v));
    expect(find('model', { model: 'alpha' })).toMatchObject({ judge: 'judge:j', language: '', n_replies: 5, n_polarity: 2, share: 0.4, model_mean: null });
    expect(find('model', { model: 'beta' })).toMatchObject({ share: 1 });
    expect(find('language', { language: 'en' })).toMatchObject({ model: '', n_replies: 8, n_polarity: 5, share: 0.625, model_mean: 0.7 });
    expect(find('construction', { construction: 'attitude_verb' })).toMatchObject({ n_replies: 2, share: 0, model_mean: 0 });
    expect(find('construction', { construction: 'evaluative_adjective' })?.model_mean).toBeCloseTo(5 / 6, 12);
    expect(find('wording_model', { model: 'alpha', wording: 'en.oppose-support:notP' })).toMatchObject({ n_replies: 2, share: 0 });
    expect(find('cell', { model: 'beta', language: 'en' })).toMatchObject({ n_replies: 3, share: 1 });
    // Only the negative interrogative counts: the plain replies are not in any polarity share.
    expect(p.filter((x) => x.level === 'cell').reduce((a, x) => a + x.n_replies, 0)).toBe(8);
  });

  it('writes the files and the summary sections', async () => {
    const files = new Map<string, string>();
    await writeResults(async (n, c) => void files.set(n, c), results, { campaign: 'test' });
    expect(files.get('polarity_shares.csv')).toContain('model,judge:j,alpha,,,,5,2,0.4,');
    expect(files.get('reply_disagreement_summary.csv')).toContain('negint,yesno,judge:j,rule,2,8,0.3,0,0.6');
    const md = files.get('summary.md') ?? '';
    expect(md).toContain('## The same replies read twice');
    expect(md).toContain('| judge:j | alpha | 5 | 0.40 |');
  });
});

describe('reading agreement without a database', () => {
  const row = (over: Partial<ReadingAgreementRow>): ReadingAgreementRow => ({
    model: 'm', language: 'ja', form: 'negint', constraint: 'yesno', concept_pair: 'ja.x', construction: 'attitude_verb', named: 'P',
    reader_a: 'judge:a', reader_b: 'rule', n_both_decisive: 4, n_agree: 1, ...over,
  });

  it('keeps the polarity share to the token rule against a judge, under the negative interrogative', () => {
    const p = polarityShares([row({}), row({ reader_a: 'rule', reader_b: 'rule+' }), row({ constraint: 'verdict' }), row({ reader_a: 'judge:a', reader_b: 'judge:b' })]);
    expect(p.filter((x) => x.level === 'cell')).toEqual([
      { level: 'cell', judge: 'judge:a', model: 'm', language: 'ja', construction: '', wording: '', n_replies: 4, n_polarity: 1, share: 0.25, model_mean: null },
    ]);
    // A pair of readers never both decisive gives no rate, and the cell does not count in the mean.
    const d = replyDisagreement([row({ n_both_decisive: 0, n_agree: 0 }), row({ model: 'n' })]);
    expect(d.cells.map((c) => c.disagreement)).toEqual([null, 0.75]);
    expect(d.summary[0]).toMatchObject({ n_cells: 1, mean_disagreement: 0.75 });
    expect(agreementAnalysis([]).polarity).toEqual([]);
  });

  it('accepts counts as bigints or strings and reports a broken row by index and column', () => {
    const ok = parseAgreementRows([{ ...row({}), n_both_decisive: 4n, n_agree: '1' }]);
    expect(ok[0]).toMatchObject({ n_both_decisive: 4, n_agree: 1 });
    let err: unknown;
    try {
      parseAgreementRows([{ ...row({}) }, { ...row({}), form: 'question', n_agree: 9 }]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CampaignFileError);
    expect((err as CampaignFileError).issues.map((i) => i.path)).toEqual(['rows[1].form', 'rows[1].n_agree']);
    expect(String((err as Error).message)).toMatch(/reading_agreement\.sql/);
  });

  it('renders its placeholders, chosen replies included', () => {
    const sql = renderAgreementSql({ prompts: 'tp', replies: 'tr', readings: 'tg' });
    expect(sql).toContain('FROM tp');
    expect(sql).toContain('FROM tg');
    expect(sql).toContain('FROM tr');
    expect(sql).not.toMatch(/\{\{/);
  });
});
