import { describe, expect, it } from 'vitest';
import { DuckDb, onOneThreadIfOutOfMemory } from '../../lib/store/DuckDb.js';
import { SqlLibrary } from '../../lib/query/sql.js';
import type { Queryable } from '../../lib/query/types.js';
import { within } from '../helpers/within.js';

// A query's rows read a chunk at a time (DuckDb.startChunks, SqlLibrary.startChunks): what lets
// FAR-6's analysis hold one cell's item rows instead of the campaign's.
describe('rows read a chunk at a time', () => {
  it('hands every row once, in order, in DuckDB chunks of at most 2,048 rows', async () => {
    const db = await DuckDb.open({ threads: 2 });
    try {
      const read = await db.startChunks<{ i: number; s: string }>("SELECT i::INTEGER AS i, 'r' || i AS s FROM range(5000) t(i) ORDER BY i");
      const sizes: number[] = [];
      const seen: number[] = [];
      await read((rows) => {
        sizes.push(rows.length);
        for (const r of rows) seen.push(r.i);
        expect(rows[0]).toEqual({ i: rows[0]!.i, s: `r${rows[0]!.i}` });
      });
      expect(sizes.length).toBeGreaterThan(1);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(2048);
      expect(seen).toEqual(Array.from({ length: 5000 }, (_, i) => i));
      // The connection is free again once the rows are read.
      expect(await db.all('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      db.close();
    }
  });

  it('reads a textOnlyWhere column only in the rows its condition names, wherever the condition column stands', async () => {
    const db = await DuckDb.open({ threads: 2 });
    try {
      // The key before its condition, the condition an ENUM (as the analysis's coded factors are), NULLs in both.
      const sql = `SELECT i::INTEGER AS i, CASE WHEN i % 7 = 0 THEN NULL ELSE 'key-' || i || '-0123456789abcdef' END AS prompt_key,
        CAST(CASE WHEN i % 11 = 0 THEN NULL WHEN i % 4 = 0 THEN 'label' ELSE 'free' END AS ENUM('free', 'label')) AS "constraint"
        FROM range(5000) t(i) ORDER BY i`;
      const rows: Record<string, unknown>[] = [];
      const read = await db.startChunks<Record<string, unknown>>(sql, { textOnlyWhere: { prompt_key: { column: 'constraint', is: 'label' } } });
      await read((chunk) => rows.push(...chunk));
      const whole = await db.all<Record<string, unknown>>(sql);
      expect(rows).toHaveLength(5000);
      rows.forEach((r, i) => {
        const w = whole[i]!;
        expect(r['constraint']).toBe(w['constraint']);
        expect(r['prompt_key']).toBe(w['constraint'] === 'label' ? w['prompt_key'] : undefined);
      });
      expect(rows.filter((r) => typeof r['prompt_key'] === 'string').length).toBeGreaterThan(900);
      // A condition on a column the result lacks reads the column whole.
      const again: Record<string, unknown>[] = [];
      await (await db.startChunks<Record<string, unknown>>(sql, { textOnlyWhere: { prompt_key: { column: 'no_such', is: 'label' } } }))((chunk) => again.push(...chunk));
      expect(again).toEqual(whole);
    } finally {
      db.close();
    }
  });

  it('gives the index of each chunk\'s first row, and passes an error of the reader through unchanged', async () => {
    const dir = new URL('../fixtures/sql-chunks/', import.meta.url);
    const library = new SqlLibrary('test', dir, ['numbers', 'broken']);
    const db = await DuckDb.open({ threads: 1 });
    try {
      const read = await library.startChunks<{ i: number }>(db, 'numbers', {});
      const offsets: number[] = [];
      await read((rows, offset) => {
        expect(rows[0]!.i).toBe(offset);
        offsets.push(offset);
      });
      expect(offsets[0]).toBe(0);
      expect(offsets.length).toBeGreaterThan(1);

      const mine = new RangeError('the reader refused row 2048');
      const again = await library.startChunks<{ i: number }>(db, 'numbers', {});
      await expect(again((_rows, offset) => {
        if (offset > 0) throw mine;
      })).rejects.toBe(mine);
      // A failing query is named by its file, as `run` names it.
      await expect(library.startChunks(db, 'broken', {})).rejects.toThrow(/broken\.sql/);
      expect(await db.all('SELECT 2 AS two')).toEqual([{ two: 2 }]);
    } finally {
      db.close();
    }
  });

  it('without Queryable.startChunks, hands all rows as one chunk at index 0', async () => {
    const dir = new URL('../fixtures/sql-chunks/', import.meta.url);
    const library = new SqlLibrary('test', dir, ['numbers']);
    const plain: Queryable = { all: async <T>() => [{ i: 0 }, { i: 1 }] as T[] };
    const chunks: [number, number][] = [];
    await (await library.startChunks(plain, 'numbers', {}))((rows, offset) => chunks.push([rows.length, offset]));
    expect(chunks).toEqual([[2, 0]]);
  });

  it('does not run a query again on one thread once some of its rows were handed out', async () => {
    const oom = new Error('Out of Memory Error: failed to pin block');
    let lowered = 0;
    const oneThread = async <T>(work: () => Promise<T>): Promise<T> => {
      lowered++;
      return work();
    };
    await expect(onOneThreadIfOutOfMemory(() => Promise.reject(oom), oneThread, () => false)).rejects.toBe(oom);
    expect(lowered).toBe(0);
  });
});

// A second connection (DuckDb.sibling): what lets P(True)'s analysis compute the next model's rows
// while it reads the rows of the one before (lib/batteries/ptrue/analysis/queryRows.ts).
describe('a second connection to the same database', () => {
  it('runs a query while the first connection streams rows not yet read, over the same tables', async () => {
    const db = await DuckDb.open({ threads: 1 });
    try {
      await db.run('CREATE TABLE numbers AS SELECT i::INTEGER AS i FROM range(5000) t(i)');
      const read = await db.startChunks<{ i: number }>('SELECT i FROM numbers ORDER BY i');
      // On the same connection a query waits for those rows; on a sibling it runs now.
      const queued = db.all('SELECT 1 AS one');
      expect(await within(queued, 300)).toBe('waiting');
      const other = await db.sibling();
      expect(await within(other.all<{ n: number }>('SELECT count(*) AS n FROM numbers'), 5000)).toEqual([{ n: 5000 }]);
      let n = 0;
      await read((rows) => (n += rows.length));
      expect(n).toBe(5000);
      expect(await queued).toEqual([{ one: 1 }]);
    } finally {
      db.close();
    }
  });

  it('is closed with the first connection; the first stays open when the sibling closes', async () => {
    const db = await DuckDb.open({ threads: 1 });
    const other = await db.sibling();
    other.close();
    await expect(other.all('SELECT 1')).rejects.toThrow('DuckDb is closed');
    expect(await db.all('SELECT 2 AS two')).toEqual([{ two: 2 }]);
    const another = await db.sibling();
    db.close();
    await expect(another.all('SELECT 1')).rejects.toThrow('DuckDb is closed');
    await expect(db.sibling()).rejects.toThrow('DuckDb is closed');
  });
});
