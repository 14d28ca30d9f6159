import { DuckDBInstance, JSDuckDBValueConverter } from '@duckdb/node-api';
import type { DuckDBValueConverter, JS } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDb } from '../../lib/store/DuckDb.js';
import { readText } from '../../lib/store/duckdbRows.js';

/** node-api's own row objects with BIGINT as numbers: what DuckDb.all gave before it read rows by column. */
const numbers: DuckDBValueConverter<JS> = (value, type, converter) => {
  const v = JSDuckDBValueConverter(value, type, converter);
  return typeof v === 'bigint' ? Number(v) : v;
};

describe('DuckDb.all: rows read column by column', () => {
  let db: DuckDb;
  let instance: DuckDBInstance;
  beforeAll(async () => {
    db = await DuckDb.open();
    instance = await DuckDBInstance.create(':memory:');
  });
  afterAll(() => {
    db.close();
    instance.closeSync();
  });

  async function libraryRows(sql: string): Promise<Record<string, JS>[]> {
    const conn = await instance.connect();
    try {
      const rows: Record<string, JS>[] = [];
      for await (const chunk of (await conn.stream(sql)).yieldConvertedRowObjects(numbers)) rows.push(...chunk);
      return rows;
    } finally {
      conn.closeSync();
    }
  }

  // Every type the SQL stage returns, NULLs among them, over more rows than one chunk (2,048).
  const sql = `
    SELECT
      i AS n_int,
      CAST(i % 100 AS TINYINT) AS n_tiny,
      CAST(i AS SMALLINT) AS n_small,
      CAST(i AS BIGINT) * 3 AS n_big,
      CAST(i AS HUGEINT) AS n_huge,
      CAST(i AS UINTEGER) AS n_uint,
      i / 7.0 AS n_decimal,
      CAST(i AS DOUBLE) / 3 AS n_double,
      CAST(i AS FLOAT) / 4 AS n_float,
      i % 2 = 0 AS flag,
      CASE WHEN i % 5 = 0 THEN NULL ELSE 'text-' || i || repeat('x', i % 20) END AS label,
      CAST(CASE i % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE NULL END AS ENUM('a', 'b')) AS level,
      TIMESTAMP '2026-01-01 00:00:00' + INTERVAL (i) SECOND AS at,
      [i, i + 1] AS pair,
      {'k': i, 's': 'v' || i} AS rec,
      'same' AS "dup", 'other' AS "dup",
      'q' AS "a ""quoted"" name\nwith a newline",
      NULL AS nothing
    FROM range(5000) t(i)`;

  it('gives the rows node-api gives, for every type the SQL stage returns', async () => {
    const ours = await db.all(sql);
    expect(ours).toHaveLength(5000);
    expect(ours).toEqual(await libraryRows(sql));
    expect(Object.keys(ours[0]!)).toEqual(Object.keys((await libraryRows(`${sql} LIMIT 1`))[0]!));
    expect(ours[5]).toMatchObject({ n_int: 5, n_big: 15, label: null, level: null, flag: false });
  });

  it('gives no row for an empty result', async () => {
    expect(await db.all(`${sql} LIMIT 0`)).toEqual([]);
  });

  // Runs of equal short texts (reused from the row before), NULLs inside the runs, texts of 12
  // bytes (inline in DuckDB's string_t) and 13 (not), multi-byte characters and a run across chunks.
  const runs = `
    SELECT i,
      CASE WHEN i % 7 = 3 THEN NULL ELSE 'm' || (i // 500) END AS model,
      CASE WHEN i % 3 = 0 THEN 'abcdefghijkl' ELSE 'abcdefghijklm' END AS edge,
      CASE WHEN i < 2500 THEN 'é€' ELSE 'é€x' END AS wide,
      CASE WHEN i % 11 = 0 THEN '' ELSE 'same' END AS empty_or_not
    FROM range(5000) t(i) ORDER BY i`;

  it('gives the texts node-api gives where rows repeat the row before', async () => {
    const ours = await db.all(runs);
    expect(ours).toEqual(await libraryRows(runs));
    expect(ours[3]).toMatchObject({ model: null, edge: 'abcdefghijkl' });
    expect(ours[4]).toMatchObject({ model: 'm0', edge: 'abcdefghijklm' });
  });
});

describe('readText', () => {
  /** A VARCHAR vector as node-api lays it out: 16 bytes per value, texts of ≤ 12 bytes inline. */
  function vector(values: readonly (string | null)[]) {
    const view = new DataView(new ArrayBuffer(values.length * 16));
    const bytes = new Uint8Array(view.buffer);
    values.forEach((v, i) => {
      if (v === null) return;
      const b = new TextEncoder().encode(v);
      view.setUint32(i * 16, b.length, true);
      if (b.length <= 12) bytes.set(b, i * 16 + 4);
      else view.setUint32(i * 16 + 4, i, true); // a prefix; the text would be behind a pointer
    });
    let decoded = 0;
    return {
      dataView: view,
      validity: { itemValid: (i: number) => values[i] !== null },
      getItem(i: number) {
        decoded += 1;
        return values[i] ?? null;
      },
      decoded: () => decoded,
    };
  }

  it('decodes a short text once per run, and every long text and NULL', () => {
    const values = ['en', 'en', 'en', null, 'en', 'de', 'de', 'a long text of 20 b', 'a long text of 20 b', null, null];
    const v = vector(values);
    const out: unknown[] = new Array(values.length);
    readText(v, values.length, out);
    expect(out).toEqual(values);
    // en (index 0), NULL (3), en after the NULL (4), de (5), the two long texts, the two NULLs.
    expect(v.decoded()).toBe(8);
  });

  it('decodes every value of a vector without the bytes it reads', () => {
    const v = vector(['en', 'en']);
    const out: unknown[] = new Array(2);
    readText({ getItem: (i) => v.getItem(i) }, 2, out);
    expect(out).toEqual(['en', 'en']);
    expect(v.decoded()).toBe(2);
  });
});
