import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allBatteries } from '../../lib/batteries/index.js';
import type { PromptItem } from '../../lib/core/types.js';
import { JsParquetWriter, parquetBytes, readParquetRows } from '../../lib/store/JsParquet.js';
import { DuckDb, LocalBlobStore, ParquetWriter, promptColumns, promptRow, sqlString, TABLE_SCHEMAS } from '../../lib/store/index.js';
import type { ColumnDef, PartTarget, ReadingRow, ReplyRow } from '../../lib/store/index.js';
import { loadContext, REPO_ROOT, rootItems } from '../helpers/campaigns.js';

// The Lambda worker writes and reads parts in JavaScript (lib/store/JsParquet.ts),
// the local run with DuckDB (ParquetWriter). The same rows written by both must read back through
// DuckDB (what the local analysis and Athena read) as the same table: names, types, values, nulls,
// row order; and the JavaScript reader must read DuckDB's parts as DuckDB does.

const root = mkdtempSync(path.join(os.tmpdir(), 'sondage-jsparquet-'));
const duckStore = new LocalBlobStore(path.join(root, 'duck'));
const jsStore = new LocalBlobStore(path.join(root, 'js'));
let duck: ParquetWriter;
const js = new JsParquetWriter();
let db: DuckDb;

beforeAll(async () => {
  duck = await ParquetWriter.create({ threads: 1 });
  db = await DuckDb.open({ threads: 1 });
});
afterAll(async () => {
  db.close();
  await duck.close();
  await js.close();
  rmSync(root, { recursive: true, force: true });
});

const partition = { campaign: 'eq', model: 'm-1', language: 'de' } as const;

/** A file's columns and rows as DuckDB reads them, in file order. */
async function duckRead(file: string): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
  // The file alone: no hive columns from its model=/language= path.
  const source = `read_parquet(${sqlString(file)}, hive_partitioning = false, file_row_number = true)`;
  const described = await db.all<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * EXCLUDE (file_row_number) FROM ${source}`);
  const rows = await db.all<Record<string, unknown>>(`SELECT * EXCLUDE (file_row_number) FROM ${source} ORDER BY file_row_number`);
  return { columns: described.map((c) => `${c.column_name} ${c.column_type}`), rows };
}

/** Writes `rows` with both writers and returns what DuckDB reads of each. */
async function writeBoth(target: Omit<PartTarget, 'campaign' | 'model' | 'language'>, rows: readonly object[], columns?: readonly ColumnDef[]) {
  const t = { ...partition, ...target } as PartTarget;
  const opts = { trusted: true, ...(columns ? { columns } : {}) };
  const a = await duck.writePart(duckStore, t, rows as never, opts);
  const b = await js.writePart(jsStore, t, rows as never, opts);
  expect(b.key).toBe(a.key);
  expect(b.rows).toBe(rows.length);
  return { duckFile: duckStore.localPath(a.key), jsFile: jsStore.localPath(b.key), fromDuck: await duckRead(duckStore.localPath(a.key)), fromJs: await duckRead(jsStore.localPath(b.key)) };
}

const TEXTS = ['', 'plain', 'ünïcödé ✓ 日本語 🙂', 'quote " and \\ backslash', 'line\nbreak\ttab', 'x'.repeat(5000)];

function replyRows(n: number): ReplyRow[] {
  return Array.from({ length: n }, (_, i) => ({
    item_id: `item-${String(i).padStart(5, '0')}`,
    campaign: partition.campaign,
    phase: 'generate',
    model: partition.model,
    language: partition.language,
    attempt: 1 + (i % 3),
    status: i % 7 === 0 ? 'error' : 'ok',
    text: i % 7 === 0 ? null : TEXTS[i % TEXTS.length]!,
    finish_reason: i % 5 === 0 ? null : 'stop',
    input_tokens: i === 1 ? 2 ** 31 - 1 : i * 13,
    output_tokens: i === 2 ? 0 : i,
    cached_input_tokens: i % 4 === 0 ? null : i % 4,
    cost_usd: i === 3 ? 0 : i === 4 ? 1e-12 : (i * 0.000123456789) / 7,
    latency_ms: i === 5 ? 123456789.125 : i * 1.5,
    logprobs_json: i % 3 === 0 ? JSON.stringify({ Yes: { logprob: -0.1053605156578263, exact: true }, No: { logprob: -2.3025850929940455, exact: false } }) : null,
    logprobs_exact: i % 3 === 0 ? i % 2 === 0 : null,
    error_class: i % 7 === 0 ? 'rate_limit' : null,
    error_message: i % 7 === 0 ? 'HTTP 429: slow down — « retry »' : null,
    settings_json: '{"max_tokens":256,"temperature":0}',
    provider: 'simulated',
    simulated: i % 2 === 0,
    created_at: new Date(Date.UTC(2026, 10, 30, 12, 0, i)).toISOString(),
  }));
}

function readingRows(n: number): ReadingRow[] {
  return Array.from({ length: n }, (_, i) => ({
    item_id: `item-${i % 50}`,
    campaign: partition.campaign,
    phase: 'judge',
    model: partition.model,
    language: partition.language,
    reader: i % 3 === 0 ? 'rule' : `judge:j${i % 2}`,
    label: ['yes', 'no', 'unclear'][i % 3]!,
    raw: i % 4 === 0 ? null : TEXTS[i % TEXTS.length]!,
    judge_item_id: i % 5 === 0 ? null : `judge-${i}`,
    facet: i % 6 === 0 ? 'scope' : null,
    value: i % 2 === 0 ? null : i === 1 ? -0.5 : i / 3,
  }));
}

describe('the JavaScript Parquet writer writes what DuckDB writes', () => {
  it('replies: same columns, types, values, nulls and row order', async () => {
    const rows = replyRows(300);
    const { fromDuck, fromJs, jsFile } = await writeBoth({ phase: 'generate', table: 'replies', partName: 'part-r.parquet' }, rows);
    expect(fromDuck.columns).toEqual(TABLE_SCHEMAS.replies.map((c) => `${c.name} ${c.type}`));
    expect(fromJs.columns).toEqual(fromDuck.columns);
    expect(fromJs.rows).toEqual(fromDuck.rows);
    expect(fromJs.rows).toHaveLength(300);
    expect(readFileSync(jsFile).subarray(0, 4).toString()).toBe('PAR1');
  });

  it('readings: same table', async () => {
    const { fromDuck, fromJs } = await writeBoth({ phase: 'judge', table: 'readings', partName: 'part-g.parquet' }, readingRows(120));
    expect(fromJs.columns).toEqual(TABLE_SCHEMAS.readings.map((c) => `${c.name} ${c.type}`));
    expect(fromJs).toEqual(fromDuck);
  });

  it('an empty part: the same columns, no rows', async () => {
    const { fromDuck, fromJs } = await writeBoth({ phase: 'generate', table: 'replies', partName: 'part-empty.parquet' }, []);
    expect(fromJs).toEqual(fromDuck);
    expect(fromJs.rows).toEqual([]);
  });

  it('absent nullable keys and non-finite doubles are NULL in both (JSON.stringify drops them, DuckDB reads NULL)', async () => {
    const [base] = readingRows(2).slice(1);
    const rows = [{ ...base!, value: Number.NaN }, { ...base!, value: Number.POSITIVE_INFINITY }, Object.fromEntries(Object.entries(base!).filter(([k]) => k !== 'raw' && k !== 'facet'))];
    const { fromDuck, fromJs } = await writeBoth({ phase: 'judge', table: 'readings', partName: 'part-odd.parquet' }, rows);
    expect(fromJs).toEqual(fromDuck);
    expect(fromJs.rows.map((r) => [r['value'], r['raw'], r['facet']])).toEqual([[null, base!.raw, base!.facet], [null, base!.raw, base!.facet], [base!.value, null, null]]);
  });

  // Every battery's prompts, from its example campaign: its factor and extra columns, with their types.
  for (const battery of allBatteries()) {
    it(`prompts of ${battery.name}: same table`, async () => {
      const ctx = await loadContext(path.join(REPO_ROOT, 'examples', battery.name, 'demo.yaml'));
      const items: PromptItem[] = [];
      const roots = ctx.graph.phases.filter((p) => p.after.length === 0);
      for (const phase of roots) {
        for (const model of ctx.campaign.models.slice(0, 2)) for (const language of ctx.design.languages.slice(0, 2)) items.push(...rootItems(ctx, model, language, phase.name).slice(0, 100));
      }
      expect(items.length).toBeGreaterThan(0);
      const columns = promptColumns(battery.prompts);
      const rows = items.map((item) => ({ ...promptRow(item, battery.prompts), ...partition }));
      const { fromDuck, fromJs } = await writeBoth({ phase: 'generate', table: 'prompts', partName: `part-${battery.name}.parquet` }, rows, columns);
      expect(fromDuck.columns).toEqual(columns.map((c) => `${c.name} ${c.type}`));
      expect(fromJs).toEqual(fromDuck);
    });
  }

  it('a reply journal converted by both (keys outside the schema ignored): same table', async () => {
    const journal = path.join(root, 'journal.ndjson');
    writeFileSync(journal, replyRows(80).map((r) => `${JSON.stringify({ ...r, extra: 'ignored' })}\n`).join(''));
    const t = { ...partition, phase: 'generate', table: 'replies', partName: 'part-j.parquet' } as const;
    const a = await duck.convertPart(duckStore, t, journal);
    const b = await js.convertPart(jsStore, t, journal);
    expect(await duckRead(jsStore.localPath(b))).toEqual(await duckRead(duckStore.localPath(a)));
  });

  it('checks untrusted rows as ParquetWriter does', async () => {
    const bad = { ...replyRows(1)[0]!, attempt: 1.5 };
    const t = { ...partition, phase: 'generate', table: 'replies', partName: 'part-bad.parquet' } as const;
    const duckError = await duck.writePart(duckStore, t, [bad]).catch((e: Error) => e.message);
    const jsError = await js.writePart(jsStore, t, [bad]).catch((e: Error) => e.message);
    expect(jsError).toBe(duckError);
    expect(jsError).toMatch(/column attempt expects INTEGER/);
  });
});

describe('the JavaScript Parquet reader reads DuckDB parts as DuckDB does', () => {
  it('replies and readings (zstd) and its own parts (gzip)', async () => {
    for (const [table, rows] of [['replies', replyRows(200)], ['readings', readingRows(90)]] as const) {
      const { duckFile, jsFile, fromDuck } = await writeBoth({ phase: 'x', table, partName: `part-read-${table}.parquet` }, rows);
      expect(await readParquetRows(duckFile)).toEqual(fromDuck.rows);
      expect(await readParquetRows(jsFile)).toEqual(fromDuck.rows);
    }
  });
});

describe('the JavaScript writer compresses about as well as DuckDB, so Athena scans about as few bytes', () => {
  const columns = TABLE_SCHEMAS.replies;
  const rows = replyRows(2000) as unknown as Record<string, unknown>[];

  it('every column chunk is GZIP, and the part is far smaller than the same rows in Snappy', () => {
    const bytes = parquetBytes(columns, rows);
    const meta = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    const codecs = new Set(meta.row_groups.flatMap((g) => g.columns.map((c) => c.meta_data?.codec)));
    expect([...codecs]).toEqual(['GZIP']);
    const snappy = parquetWriteBuffer({
      columnData: columns.map((c) => ({ name: c.name, data: rows.map((r) => r[c.name] ?? null), nullable: true })) as never,
      codec: 'SNAPPY',
    });
    expect(bytes.byteLength).toBeLessThan(0.8 * snappy.byteLength);
  });

  it('parts written in Snappy before (by an earlier worker) still read', async () => {
    const snappy = parquetWriteBuffer({ columnData: [{ name: 'text', data: ['a', null, 'ünï'], type: 'STRING', nullable: true }], codec: 'SNAPPY' });
    expect(await readParquetRows(new Uint8Array(snappy))).toEqual([{ text: 'a' }, { text: null }, { text: 'ünï' }]);
  });
});
