import { describe, expect, it } from 'vitest';
import { DuckDb } from '../../lib/store/DuckDb.js';
import { KeptSubqueries } from '../../lib/store/keptSubqueries.js';
import { within } from '../helpers/within.js';


describe('KeptSubqueries', () => {
  it('starts a query while the rows of another are unread (a second connection), and both read the kept tables', async () => {
    const db = await DuckDb.open({ threads: 1 });
    const q = new KeptSubqueries(db);
    try {
      const kept = await q.materialize('SELECT i::INTEGER AS i FROM range(5000) t(i)');
      const first = await q.startChunks<{ i: number }>(`SELECT i FROM ${kept} ORDER BY i`);
      // The first connection streams `first` until its rows are read: this one runs on the second.
      const second = await within(q.startChunks<{ i: number }>(`SELECT i FROM ${kept} WHERE i % 2 = 0 ORDER BY i DESC`), 5000);
      expect(second).not.toBe('waiting');
      const evens: number[] = [];
      await (second as Exclude<typeof second, 'waiting'>)((rows) => evens.push(...rows.map((r) => r.i)));
      expect(evens.length).toBe(2500);
      expect(evens[0]).toBe(4998);
      let n = 0;
      await first((rows) => (n += rows.length));
      expect(n).toBe(5000);
      // Both free again: a query runs at once, and the kept table is dropped with the second connection closed.
      expect(await q.all<{ n: number }>(`SELECT count(*) AS n FROM ${kept}`)).toEqual([{ n: 5000 }]);
      await q.drop();
      await expect(db.all(`SELECT count(*) FROM ${kept}`)).rejects.toThrow(/does not exist/);
    } finally {
      db.close();
    }
  });

  it('gives each analysis on one database its own kept tables', async () => {
    const db = await DuckDb.open({ threads: 1 });
    try {
      const a = await new KeptSubqueries(db).materialize('SELECT 1 AS x');
      const b = await new KeptSubqueries(db).materialize('SELECT 2 AS x');
      expect(a).not.toBe(b);
      expect(await db.all(`SELECT (SELECT x FROM ${a}) AS a, (SELECT x FROM ${b}) AS b`)).toEqual([{ a: 1, b: 2 }]);
    } finally {
      db.close();
    }
  });
});
