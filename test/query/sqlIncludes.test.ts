import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlLibrary } from '../../lib/query/sql.js';
import type { Queryable } from '../../lib/query/types.js';

/** A database that records what it is asked: kept subqueries by their SQL, and the queries run. */
function recordingDb(materializes: boolean): Queryable & { kept: string[]; ran: string[] } {
  const kept: string[] = [];
  const ran: string[] = [];
  return {
    kept,
    ran,
    all: <T>(sql: string) => {
      ran.push(sql);
      return Promise.resolve([] as T[]);
    },
    ...(materializes
      ? {
          materialize: (sql: string) => {
            const at = kept.indexOf(sql);
            if (at >= 0) return Promise.resolve(`kept_${at + 1}`);
            kept.push(sql);
            return Promise.resolve(`kept_${kept.length}`);
          },
        }
      : {}),
  };
}

describe('SqlLibrary and the queries a query includes', () => {
  let dir: string;
  let lib: SqlLibrary;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-sql-includes-'));
    await writeFile(path.join(dir, 'inner.sql'), 'SELECT item_id FROM {{replies}}');
    await writeFile(path.join(dir, 'middle.sql'), 'SELECT * FROM {{query:inner}} i JOIN {{readings}} r USING (item_id)');
    await writeFile(path.join(dir, 'outer.sql'), 'SELECT * FROM {{query:middle}} m JOIN {{query:inner}} i USING (item_id)');
    await writeFile(path.join(dir, 'loop.sql'), 'SELECT * FROM {{query:loop}} l');
    lib = new SqlLibrary('test', pathToFileURL(`${dir}/`), ['inner', 'middle', 'outer', 'loop']);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const tables = { replies: 'r_src', readings: 'g_src' };

  it('inlines every included query where the database keeps none (Athena)', async () => {
    const db = recordingDb(false);
    await lib.run(db, 'outer', tables);
    expect(db.ran).toEqual([lib.render('outer', tables)]);
    expect(db.ran[0]).toContain('SELECT item_id FROM r_src');
  });

  it('keeps each included query once, innermost first, and reads it by name in every query that includes it', async () => {
    const db = recordingDb(true);
    await lib.run(db, 'outer', tables);
    await lib.run(db, 'middle', tables);
    // inner once (asked by middle and by outer), then middle over the kept inner.
    expect(db.kept).toEqual(['SELECT item_id FROM r_src', 'SELECT * FROM kept_1 i JOIN g_src r USING (item_id)']);
    expect(db.ran).toEqual(['SELECT * FROM kept_2 m JOIN kept_1 i USING (item_id)', 'SELECT * FROM kept_1 i JOIN g_src r USING (item_id)']);
  });

  it('keeps the same query over other sources apart', async () => {
    const db = recordingDb(true);
    await lib.run(db, 'middle', tables);
    await lib.run(db, 'middle', { replies: 'other_src', readings: 'g_src' });
    expect(db.kept).toEqual(['SELECT item_id FROM r_src', 'SELECT item_id FROM other_src']);
  });

  it('names the query that includes one whose table the database could not make', async () => {
    const db = { ...recordingDb(true), materialize: () => Promise.reject(new Error('Out of Memory Error')) };
    await expect(lib.run(db, 'outer', tables)).rejects.toThrow('analysis query outer.sql failed: Out of Memory Error');
  });

  it('refuses a query that includes itself, whether or not the database keeps subqueries', async () => {
    for (const materializes of [false, true]) {
      await expect(lib.run(recordingDb(materializes), 'loop', tables)).rejects.toThrow('analysis query loop.sql includes itself (loop → loop)');
    }
  });
});
