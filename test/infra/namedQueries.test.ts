import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namedQueryParameters, namedQueryText } from '../../infra/constructs/Analytics.js';
import { glueTableName } from '../../lib/analysis/athena.js';
import { far6 } from '../../lib/batteries/far6/index.js';
import type { TableSources } from '../../lib/query/types.js';
import { ParquetFixture } from '../batteries/far6/analysis/fixtures.js';

// The named queries are the analysis SQL files with Glue tables as sources and the campaign and
// model as `?` execution parameters. Here they run on DuckDB (which binds `?` the same way) over
// tables shaped like the Glue ones — the Parquet plus campaign_key/phase_key partition columns,
// holding two campaigns — and must give what the local SQL stage gives for that campaign and model.

const T = '2026-01-01T00:00:0';
let fx: ParquetFixture;

/**
 * A Glue-like table: the fixture's Parquet, once per campaign; the judge's readings stored with the
 * generate phase's, as FAR-6 stores them; and an audit's readings in a phase of their own, which
 * the named queries must not read.
 */
function glueView(table: 'prompts' | 'replies' | 'readings', source: string): string {
  const phase = table === 'readings' ? "CASE WHEN reader = 'judge:audit' THEN 'audit-retest' ELSE 'generate' END" : "'generate'";
  return ['ours', 'theirs'].map((c) => `SELECT *, '${c}' AS campaign_key, ${phase} AS phase_key FROM ${source}`).join(' UNION ALL ');
}

beforeAll(async () => {
  fx = await ParquetFixture.create();
  const rows = (model: string, language: string) => ({ model, language });
  for (const [model, language] of [
    ['alpha', 'en'],
    ['beta', 'en'],
    ['alpha', 'de'],
  ] as const) {
    const at = rows(model, language);
    const id = (n: number) => `${model}-${language}-${n}`;
    await fx.prompts([
      { ...at, item_id: id(1), prompt_key: `${language}-K1`, story: 's1', named: 'P' },
      { ...at, item_id: id(2), prompt_key: `${language}-K1`, story: 's1', named: 'P', repeat: 1 },
      { ...at, item_id: id(3), prompt_key: `${language}-K2`, story: 's2', named: 'notP', form: 'negint' },
    ]);
    await fx.replies([
      { ...at, item_id: id(1), attempt: 1, status: 'error', created_at: `${T}1Z` },
      { ...at, item_id: id(1), attempt: 2, status: 'ok', created_at: `${T}2Z` },
      { ...at, item_id: id(2), attempt: 1, status: 'ok', created_at: `${T}3Z` },
      { ...at, item_id: id(3), attempt: 1, status: 'ok', created_at: `${T}4Z` },
    ]);
    await fx.readings([
      { ...at, item_id: id(1), reader: 'rule', label: 'P' },
      { ...at, item_id: id(1), reader: 'judge:j', label: 'notP', judge_item_id: `j-${id(1)}` },
      { ...at, item_id: id(2), reader: 'rule', label: model === 'alpha' ? 'both' : 'P' },
      { ...at, item_id: id(3), reader: 'rule', label: 'notP' },
      { ...at, item_id: id(3), reader: 'judge:audit', label: 'P', judge_item_id: `a-${id(3)}` },
    ]);
  }
  await fx.conn.run('CREATE SCHEMA sondage_db');
  for (const table of ['prompts', 'replies', 'readings'] as const) {
    await fx.conn.run(`CREATE VIEW sondage_db.${glueTableName('far6', table)} AS ${glueView(table, fx.tables[table])}`);
  }
});
afterAll(async () => fx.close());

/** Rows without the partition columns, in a stable order. */
function normal(rows: readonly Record<string, unknown>[]): string[] {
  const plain = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? Number(v) : v);
  return rows.map((r) => JSON.stringify(Object.entries(r).filter(([k]) => k !== 'campaign_key' && k !== 'phase_key'), plain)).sort();
}

describe('Athena named queries', () => {
  it.each(far6.analysis.sql.queries.map((n) => [n]))('%s gives what the local SQL stage gives for one campaign and model', async (name) => {
    // prepare: the local stage over alpha's rows only, and the generate phase's readings only
    const only = (source: string) => `(SELECT * FROM ${source} WHERE model = 'alpha')`;
    const local: TableSources = { prompts: only(fx.tables.prompts), replies: only(fx.tables.replies), readings: `(SELECT * FROM ${only(fx.tables.readings)} r WHERE reader <> 'judge:audit')` };
    let expected: Record<string, unknown>[];
    try {
      expected = await far6.analysis.sql.run<Record<string, unknown>>(fx.db, name, local);
    } catch (err) {
      // A query this small fixture cannot feed (columns it lacks) must fail the same way on both.
      await expect(fx.conn.runAndReadAll(namedQueryText(far6, name, 'sondage_db'), namedQueryParameters(far6).map((p) => (p.endsWith('campaign') ? 'ours' : 'alpha')))).rejects.toThrow();
      expect(err).toBeInstanceOf(Error);
      return;
    }
    // act: the named query with its execution parameters, campaign and model once per table
    const params = namedQueryParameters(far6).map((p) => (p.endsWith('campaign') ? 'ours' : 'alpha'));
    const got = (await fx.conn.runAndReadAll(namedQueryText(far6, name, 'sondage_db'), params)).getRowObjectsJS() as Record<string, unknown>[];
    // assess: same rows, and the other campaign (a copy of the same rows) was not read twice
    expect(normal(got)).toEqual(normal(expected));
  });

  it('reads something for the fixture (the comparison above is not between two empty sets)', async () => {
    const params = namedQueryParameters(far6).map((p) => (p.endsWith('campaign') ? 'ours' : 'alpha'));
    const got = (await fx.conn.runAndReadAll(namedQueryText(far6, 'item_shares', 'sondage_db'), params)).getRowObjectsJS();
    expect(got.length).toBeGreaterThan(2);
    expect(new Set(got.map((r) => r.model))).toEqual(new Set(['alpha']));
  });
});
