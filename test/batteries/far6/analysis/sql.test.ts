import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalysisError } from '../../../../lib/query/errors.js';
import { parseCellSummaryRows, parseItemShareRows } from '../../../../lib/batteries/far6/analysis/parseRows.js';
import { parquetSource } from '../../../../lib/query/sql.js';
import { DuckDb } from '../../../../lib/store/DuckDb.js';
import { FAR6_SQL } from '../../../../lib/batteries/far6/sqlLibrary.js';
import { summarizeCells } from '../../../../lib/batteries/far6/analysis/summarizeCells.js';
import { ParquetFixture } from './fixtures.js';

const T = '2026-01-01T00:00:0';
const LABEL_MAP = (second: 'P' | 'notP'): string =>
  JSON.stringify({
    kind: 'letter',
    tokens: {},
    letters: second === 'P' ? [{ letter: 'Z', proposition: 'notP' }, { letter: 'W', proposition: 'P' }] : [{ letter: 'Z', proposition: 'P' }, { letter: 'W', proposition: 'notP' }],
  });

describe('renderSql', () => {
  const tables = { prompts: 'g_prompts', replies: 'g_replies', readings: 'g_readings' };

  it('substitutes table placeholders and inlines included queries', () => {
    const sql = FAR6_SQL.render('cell_summary', tables);
    expect(sql).not.toMatch(/\{\{/);
    expect(sql).toContain('FROM g_prompts');
    expect(sql).toContain('FROM g_replies');
    expect(sql).toContain('FROM g_readings');
  });

  it('keeps to SQL both DuckDB and Trino accept', () => {
    for (const name of ['chosen_replies', 'item_shares', 'cell_summary', 'label_maps', 'reply_totals']) {
      const sql = FAR6_SQL.render(name, tables).replace(/--.*$/gm, '');
      // DuckDB-only syntax that Athena would reject; no terminator, as files are also inlined.
      expect(sql).not.toMatch(/::|read_parquet|QUALIFY|COUNT_IF|json_extract_string|EXCLUDE|GROUP BY ALL|;/i);
      // `constraint` is reserved in both engines: always quoted.
      expect(sql).not.toMatch(/[^"]\bconstraint\b[^"]/);
    }
  });

  it('rejects unknown queries and missing tables', () => {
    expect(() => FAR6_SQL.render('drop_everything', tables)).toThrow(AnalysisError);
    expect(() => FAR6_SQL.render('item_shares', { ...tables, readings: '' })).toThrow(/no source for table "readings"/);
  });

  it('builds a DuckDB source that keeps partition values as strings and escapes quotes', () => {
    expect(parquetSource("/data/it's/*.parquet")).toBe(
      "(SELECT * FROM read_parquet(['/data/it''s/*.parquet'], hive_partitioning = true, hive_types_autocast = false, union_by_name = true))",
    );
  });
});

describe('SQL stage on hive-partitioned Parquet', () => {
  let fx: ParquetFixture;

  beforeAll(async () => {
    fx = await ParquetFixture.create();
    const en = { model: '007', language: 'en' };
    const de = { model: '007', language: 'de' };
    await fx.prompts([
      // K1: one prompt item with three repeats.
      { ...en, item_id: 'i1', prompt_key: 'K1', story: 's1', named: 'P', repeat: 0 },
      { ...en, item_id: 'i2', prompt_key: 'K1', story: 's1', named: 'P', repeat: 1 },
      { ...en, item_id: 'i3', prompt_key: 'K1', story: 's1', named: 'P', repeat: 2 },
      // Never answered.
      { ...en, item_id: 'i9', prompt_key: 'K9', story: 's1', named: 'notP' },
      // A label item in another partition.
      { ...de, item_id: 'i4', prompt_key: 'K2', story: 's2', named: 'notP', constraint: 'label', option_order: 1, reading_map_json: LABEL_MAP('P') },
    ]);
    await fx.replies([
      // i1: an error attempt, then an ok retry: one reply.
      { ...en, item_id: 'i1', attempt: 1, status: 'error', created_at: `${T}1Z` },
      { ...en, item_id: 'i1', attempt: 2, status: 'ok', created_at: `${T}2Z` },
      // i2: attempt 1 adopted twice (duplicate ok) and a later ok attempt: still one reply.
      { ...en, item_id: 'i2', attempt: 1, status: 'ok', created_at: `${T}3Z` },
      { ...en, item_id: 'i2', attempt: 1, status: 'ok', created_at: `${T}4Z` },
      { ...en, item_id: 'i2', attempt: 2, status: 'ok', created_at: `${T}5Z`, simulated: false },
      // i3: only an error: no reply, so its reading does not count.
      { ...en, item_id: 'i3', attempt: 1, status: 'error', created_at: `${T}6Z` },
      { ...de, item_id: 'i4', attempt: 1, status: 'ok', created_at: `${T}7Z`, cost_usd: 0.5 },
    ]);
    await fx.readings([
      { ...en, item_id: 'i1', reader: 'rule', label: 'P' },
      { ...en, item_id: 'i1', reader: 'judge:j', label: 'notP', judge_item_id: 'j1' },
      { ...en, item_id: 'i2', reader: 'rule', label: 'both' },
      // The same reader twice on one item (a rerun read phase): counted once.
      { ...en, item_id: 'i2', reader: 'rule', label: 'both' },
      { ...en, item_id: 'i3', reader: 'rule', label: 'invalid' },
      { ...de, item_id: 'i4', reader: 'rule', label: 'notP' },
    ]);
  });

  afterAll(async () => {
    await fx.close();
  });

  it('chooses the lowest ok attempt per item, ties by created_at', async () => {
    const rows = await FAR6_SQL.run<Record<string, unknown>>(fx.db, 'chosen_replies', fx.tables);
    const picked = Object.fromEntries(rows.map((r) => [r.item_id, [r.attempt, r.created_at]]));
    expect(picked).toEqual({ i1: [2, `${T}2Z`], i2: [1, `${T}3Z`], i4: [1, `${T}7Z`] });
  });

  it('counts labels per prompt item and reader over the chosen replies', async () => {
    const rows = await FAR6_SQL.run<Record<string, unknown>>(fx.db, 'item_shares', fx.tables);
    const byKey = new Map(rows.map((r) => [`${String(r.prompt_key)}/${String(r.reader)}`, r]));
    expect(rows).toHaveLength(3);
    expect(byKey.get('K1/rule')).toEqual({
      model: '007', language: 'en', reader: 'rule', form: 'plain', constraint: 'yesno', story: 's1',
      story_group: 'contested', concept_pair: 'wrong_right', construction: 'evaluative_adjective', named: 'P',
      option_order: 0, prompt_key: 'K1', n_replies: 2, n_p: 1, n_notp: 0, n_both: 1, n_none: 0, n_invalid: 0,
    });
    expect(byKey.get('K1/judge:j')).toMatchObject({ n_replies: 1, n_p: 0, n_notp: 1 });
    expect(byKey.get('K2/rule')).toMatchObject({ model: '007', language: 'de', constraint: 'label', named: 'notP', option_order: 1, n_replies: 1, n_notp: 1 });
  });

  it('summarises cells and reply totals', async () => {
    const summary = await FAR6_SQL.run<Record<string, unknown>>(fx.db, 'cell_summary', fx.tables);
    const enRule = summary.find((r) => r.language === 'en' && r.reader === 'rule');
    expect({ replies: Number(enRule?.replies), decisive: Number(enRule?.decisive), n_p: Number(enRule?.n_p) }).toEqual({ replies: 2, decisive: 1, n_p: 1 });
    expect(enRule?.decisive_share).toBe(0.5);
    expect(enRule?.p_share).toBe(1);

    const totals = await FAR6_SQL.run<Record<string, unknown>>(fx.db, 'reply_totals', fx.tables);
    const en = totals.find((r) => r.language === 'en');
    expect([en?.attempts, en?.ok_attempts, en?.items_ok, en?.simulated_attempts].map(Number)).toEqual([6, 4, 2, 5]);
    expect(en?.cost_usd).toBeCloseTo(0.006, 10);
  });

  it('agrees with the in-memory cell summary the local analysis uses', async () => {
    const sql = parseCellSummaryRows(await FAR6_SQL.run(fx.db, 'cell_summary', fx.tables));
    const items = parseItemShareRows(await FAR6_SQL.run(fx.db, 'item_shares', fx.tables));
    expect(summarizeCells(items)).toEqual(sql);
    expect(sql).toHaveLength(3);
  });

  it('returns the reading maps of label prompts', async () => {
    const rows = await FAR6_SQL.run<Record<string, unknown>>(fx.db, 'label_maps', fx.tables);
    expect(rows).toEqual([{ model: '007', language: 'de', prompt_key: 'K2', reading_map_json: LABEL_MAP('P') }]);
  });

  it('starts a query and reads the rows run gives, on DuckDB and on a handle with only all', async () => {
    const expected = await FAR6_SQL.run(fx.db, 'item_shares', fx.tables);
    const duck = await DuckDb.open({ threads: 1 });
    try {
      const started = await FAR6_SQL.start(duck, 'item_shares', fx.tables);
      // Queued behind the started query: the connection streams its rows until they are read.
      const totals = FAR6_SQL.run(duck, 'reply_totals', fx.tables);
      expect(await started()).toEqual(expected);
      expect(await totals).toHaveLength(2);
    } finally {
      duck.close();
    }
    expect(await (await FAR6_SQL.start(fx.db, 'item_shares', fx.tables))()).toEqual(expected);
  });

  it('names the query when a started query fails, and the database goes on', async () => {
    const broken = { ...fx.tables, readings: parquetSource(`${fx.dir}/nowhere/*.parquet`) };
    const duck = await DuckDb.open({ threads: 1 });
    try {
      // Missing files are found as the query runs: starting succeeds, reading throws.
      await expect(FAR6_SQL.start(duck, 'item_shares', broken).then((read) => read())).rejects.toThrow(/item_shares\.sql failed/);
      // A column the source lacks is found as DuckDB prepares it: starting throws.
      await expect(FAR6_SQL.start(duck, 'item_shares', { ...fx.tables, readings: '(SELECT 1 AS x)' })).rejects.toThrow(/item_shares\.sql failed/);
      // A value that fails as it is computed: reading throws.
      const bad = await duck.start("SELECT CAST(x AS INTEGER) AS n FROM (SELECT 'x' || CAST(range AS VARCHAR) AS x FROM range(3000))");
      await expect(bad()).rejects.toThrow(/Conversion|convert/i);
      expect(await duck.all('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      duck.close();
    }
    // Without Queryable.start the query runs through all: reading throws, named.
    await expect((await FAR6_SQL.start(fx.db, 'item_shares', broken))()).rejects.toThrow(/item_shares\.sql failed/);
  });

  it('names the query when the database fails', async () => {
    const broken = { ...fx.tables, readings: parquetSource(`${fx.dir}/nowhere/*.parquet`) };
    await expect(FAR6_SQL.run(fx.db, 'item_shares', broken)).rejects.toThrow(/item_shares\.sql failed/);
  });
});
