import { describe, expect, it } from 'vitest';
import { DuckDb, onOneThreadIfOutOfMemory } from '../../lib/store/DuckDb.js';

// DuckDB under its memory_limit now and then fails to pin a block with several threads where one
// thread fits: the query is run once more on one thread, and only then does its error stand.
describe('a query that runs out of memory', () => {
  const oom = new Error('Out of Memory Error: failed to pin block of size 256.0 KiB (381.5 MiB/381.4 MiB used)');

  it('runs once more on one thread and gives that run\'s rows', async () => {
    let calls = 0;
    let lowered = 0;
    const rows = await onOneThreadIfOutOfMemory(
      async () => {
        calls++;
        if (calls === 1) throw oom;
        return [{ n: calls }];
      },
      async (work) => {
        lowered++;
        return work();
      },
    );
    expect(rows).toEqual([{ n: 2 }]);
    expect(lowered).toBe(1);
  });

  it('throws any other error at once, and the second out-of-memory error', async () => {
    let lowered = 0;
    const oneThread = async <T>(work: () => Promise<T>): Promise<T> => {
      lowered++;
      return work();
    };
    await expect(onOneThreadIfOutOfMemory(() => Promise.reject(new Error('Binder Error: no such column')), oneThread)).rejects.toThrow(/Binder/);
    expect(lowered).toBe(0);
    await expect(onOneThreadIfOutOfMemory(() => Promise.reject(oom), oneThread)).rejects.toThrow(/Out of Memory/);
    expect(lowered).toBe(1);
  });

  it('runs a statement (DDL, COPY) once more on one thread too, then puts the threads back', async () => {
    const db = await DuckDb.open({ threads: 2 });
    try {
      const connection = (db as unknown as { connection: { run(sql: string): Promise<unknown> } }).connection;
      const real = connection.run.bind(connection);
      const seen: string[] = [];
      connection.run = async (sql: string) => {
        seen.push(sql);
        if (sql.startsWith('CREATE') && seen.length === 1) throw oom;
        return real(sql);
      };
      await db.run('CREATE TABLE t AS SELECT 1 AS x');
      expect(seen).toEqual(['CREATE TABLE t AS SELECT 1 AS x', "SELECT current_setting('threads') AS n", 'SET threads = 1', 'CREATE TABLE t AS SELECT 1 AS x', 'SET threads = 2']);
      expect(await db.all('SELECT x FROM t')).toEqual([{ x: 1 }]);
    } finally {
      db.close();
    }
  });

  it('leaves DuckDB on the threads it had after a query fails on one thread', async () => {
    const db = await DuckDb.open({ threads: 2, memoryLimit: '64MB' });
    try {
      // A value that cannot be built in 64 MB on any number of threads: fails twice.
      await expect(db.all("SELECT string_agg(repeat('x', 1000), ',') AS s FROM range(200000)")).rejects.toThrow(/Out of Memory|memory/i);
      expect(await db.all("SELECT current_setting('threads') AS n")).toEqual([{ n: 2 }]);
    } finally {
      db.close();
    }
  });
});
