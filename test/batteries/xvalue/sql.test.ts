import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDb, sqlIdent } from '../../../lib/store/DuckDb.js';
import { REPLY_COLUMNS, READING_COLUMNS, promptColumns, promptRow } from '../../../lib/store/schemas.js';
import type { ColumnDef } from '../../../lib/store/schemas.js';
import { XVALUE_SQL } from '../../../lib/batteries/xvalue/sqlLibrary.js';
import { XVALUE_PROMPT_COLUMNS } from '../../../lib/batteries/xvalue/promptColumns.js';
import { analyzeXvalueRows, buildRows, runXvalueAnalysis } from '../../../lib/batteries/xvalue/analysis/index.js';
import type { XvalueItem } from '../../../lib/batteries/xvalue/types.js';
import { chainSqlRows, examplePairs, runChain } from './fixtures.js';
import type { ChainRecord } from './fixtures.js';

const SQL = XVALUE_SQL;

type Value = string | number | boolean | null;
const literal = (v: Value | undefined): string =>
  v === null || v === undefined ? 'NULL' : typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : typeof v === 'number' ? String(v) : `'${v.replaceAll("'", "''")}'`;

async function createTable(db: DuckDb, name: string, columns: readonly ColumnDef[], rows: readonly Record<string, Value | undefined>[]): Promise<void> {
  const all = [...columns, { name: 'model', type: 'VARCHAR', nullable: false }, { name: 'language', type: 'VARCHAR', nullable: false }];
  await db.run(`CREATE TABLE ${name} (${all.map((c) => `${sqlIdent(c.name)} ${c.type}`).join(', ')})`);
  if (rows.length === 0) return;
  const values = rows.map((r) => `(${all.map((c) => literal(r[c.name])).join(', ')})`);
  await db.run(`INSERT INTO ${name} VALUES ${values.join(', ')}`);
}


/** A scripted judge: def-only right on even pairs; the rubric right except where a test needs otherwise. */
function answer(item: XvalueItem): string | undefined {
  const gold = item.extras.gold;
  const n = Number(item.factors.qa_id.slice(-2));
  if (item.phase === 'defonly') return n === 5 ? undefined : `{"verdict": "${n % 2 === 0 ? gold.overall : gold.overall === 'Pass' ? 'Fail' : 'Pass'}"}`;
  if (item.phase === 'step1') return n === 3 ? 'No idea.' : `{"core_issue": "${gold.core_issue}", "scope": "${gold.scope}", "nature": "${gold.nature}"}`;
  if (item.phase === 'step2') {
    const c = gold.checkpoints;
    return JSON.stringify({ A: c.A, B: c.B.verdict, C: c.C.verdict, D: c.D.verdict });
  }
  const cp = item.factors.checkpoint as 'E' | 'F' | 'G' | 'H';
  if (n === 7 && cp === 'H') return undefined;
  return JSON.stringify({ verdict: gold.checkpoints[cp].length > 0 ? 'Fail' : 'Pass', sentences: gold.checkpoints[cp] });
}

describe('X-Value SQL stage on DuckDB', () => {
  let db: DuckDb;
  let items: XvalueItem[];
  let records: ChainRecord[];

  beforeAll(async () => {
    const pairs = (await examplePairs()).filter((p) => p.language === 'en' || p.language === 'zh');
    const en = runChain(pairs, 'en', 'alpha', answer);
    const zh = runChain(pairs, 'zh', 'beta', answer);
    items = [...en.items, ...zh.items];
    records = [...en.records, ...zh.records];
    db = await DuckDb.open({ threads: 1 });
    const T = '2026-01-01T00:00:00Z';
    await createTable(db, 'p', promptColumns(XVALUE_PROMPT_COLUMNS), items.map((i) => promptRow(i, XVALUE_PROMPT_COLUMNS)));
    const reply = (r: ChainRecord, attempt: number, status: string) => ({
      item_id: r.item.item_id, campaign: 'test', phase: r.item.phase, attempt, status, text: status === 'ok' ? r.text : null, finish_reason: 'stop',
      input_tokens: 10, output_tokens: 5, cost_usd: 0.001, latency_ms: 1, settings_json: '{}', provider: 'simulated/x', simulated: true, created_at: T,
      model: r.item.model, language: r.item.language,
    });
    // Every answered item has one ok reply; the first also an earlier error attempt, which must not count twice.
    await createTable(db, 'r', REPLY_COLUMNS, [reply(records[0] as ChainRecord, 1, 'error'), ...records.map((r, i) => reply(r, i === 0 ? 2 : 1, 'ok'))]);
    const readings = records.flatMap((r) =>
      r.readings.map((d) => ({ item_id: r.item.item_id, campaign: 'test', phase: r.item.phase, reader: d.reader, facet: d.facet ?? null, label: d.label, raw: d.raw ?? null, value: null, judge_item_id: null, model: r.item.model, language: r.item.language })),
    );
    // A reading stored twice (a reread reply) counts once.
    await createTable(db, 'g', READING_COLUMNS, [...readings, readings[0] as (typeof readings)[number]]);
  });

  afterAll(() => db?.close());

  it('returns exactly the rows the TypeScript path derives, so both give the same tables', async () => {
    const fromSql = await runXvalueAnalysis(db, SQL, { prompts: 'p', replies: 'r', readings: 'g' });
    const expected = analyzeXvalueRows(buildRows(chainSqlRows(items, records).pairs, chainSqlRows(items, records).facets), { simulated: true });
    const { replyTotals, ...tables } = fromSql;
    expect(tables).toEqual(expected);
    expect(fromSql.simulated).toBe(true);
    // The scripted gaps show up: one def-only reply missing per model, step 1 unread for pair 03, H unanswered for pair 07.
    const overall = fromSql.overall.find((o) => o.model === 'alpha' && o.strategy === 'defonly');
    expect(overall?.missing).toBe(1);
    const rubric = fromSql.overall.find((o) => o.model === 'alpha' && o.strategy === 'rubric');
    expect(rubric).toMatchObject({ missing: 1, abstained: 1 });
    expect(replyTotals.find((t) => t.model === 'alpha' && t.phase === 'defonly')).toMatchObject({ attempts: 14, ok_attempts: 13, items_ok: 13 });
  });

  it('keeps to SQL that both DuckDB and Athena (Trino) accept', () => {
    const tables = { prompts: 'p', replies: 'r', readings: 'g' };
    for (const q of XVALUE_SQL.queries) {
      const sql = XVALUE_SQL.render(q, tables).replace(/--.*$/gm, '');
      expect(sql, q).not.toMatch(/::|read_parquet|QUALIFY|COUNT_IF|json_extract|EXCLUDE|GROUP BY ALL|;/i);
      expect(sql, q).not.toMatch(/\{\{/);
      // Column names are lower case (Athena folds identifiers).
      for (const m of sql.matchAll(/\bAS\s+(?!VARCHAR\b|DOUBLE\b|BIGINT\b|INTEGER\b|BOOLEAN\b|DECIMAL\b)([A-Za-z_]+)/g)) expect(m[1], q).toBe(m[1]?.toLowerCase());
    }
  });
});
