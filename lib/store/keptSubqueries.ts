/**
 * A Queryable over one DuckDB for one analysis:
 * - the queries the SQL library includes (`{{query:chosen_replies}}`, `{{query:one_reading}}`,
 *   FAR-6's `{{query:prompt_items}}`) are each computed once, as a table, instead of once in every
 *   query that includes them. FAR-6 at a million replies includes the three in three queries;
 *   keeping them took its SQL stage from 10.7 s to 8.3 s (the FAR-6 analysis bench).
 * - a query started while another's rows are still being read runs on a second connection
 *   (DuckDb.sibling), so DuckDB computes the next query while JavaScript works through the rows of
 *   the one before, where one connection would hold the next until the last row was read.
 *   P(True)'s analysis starts each model's query as the rows of the model before arrive for this
 *   (lib/batteries/ptrue/analysis/queryRows.ts).
 * Only for the span of one analysis over files that do not change meanwhile: a kept table does not
 * follow its Parquet files (`drop` frees them).
 */
import type { ChunkOptions, Queryable } from '../query/types.js';
import type { DuckDb } from './DuckDb.js';

/** Tells the kept tables of two analyses on one database apart. */
let analyses = 0;

export class KeptSubqueries implements Queryable {
  /** Table name by the subquery's SQL text; the promise, so that two queries asking at once share one table. */
  private readonly kept = new Map<string, Promise<string>>();
  private readonly prefix = `sondage_kept_${++analyses}_`;
  private made = 0;
  /** The second connection, opened when a query starts while the first is busy. */
  private second: Promise<DuckDb> | undefined;
  /** Statements each connection has running or rows not yet read: [the given one, the second]. */
  private readonly busy = [0, 0];

  constructor(private readonly db: DuckDb) {}

  all<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    return this.onLane(async (db, done) => {
      try {
        return await db.all<T>(sql);
      } finally {
        done();
      }
    });
  }

  start<T = Record<string, unknown>>(sql: string): Promise<() => Promise<T[]>> {
    return this.onLane(async (db, done) => {
      const rows = await started(db.start<T>(sql), done);
      return () => rows().finally(done);
    });
  }

  startChunks<T = Record<string, unknown>>(sql: string, options?: ChunkOptions): Promise<(each: (rows: T[]) => void) => Promise<void>> {
    return this.onLane(async (db, done) => {
      const read = await started(db.startChunks<T>(sql, options), done);
      return (each) => read(each).finally(done);
    });
  }

  materialize(sql: string): Promise<string> {
    let name = this.kept.get(sql);
    if (name === undefined) {
      const table = `${this.prefix}${++this.made}`;
      // A table, not a temporary one: the second connection reads it too.
      name = this.onLane(async (db, done) => {
        try {
          await db.run(`CREATE TABLE ${table} AS ${sql}`);
          return table;
        } finally {
          done();
        }
      });
      // A failed table is not kept: the next query asks again (and fails naming itself).
      name.catch(() => this.kept.delete(sql));
      this.kept.set(sql, name);
    }
    return name;
  }

  /** Drops the kept tables (their memory is DuckDB's until then) and closes the second connection. */
  async drop(): Promise<void> {
    const names = await Promise.allSettled(this.kept.values());
    this.kept.clear();
    for (const n of names) if (n.status === 'fulfilled') await this.db.run(`DROP TABLE IF EXISTS ${n.value}`);
    const second = this.second;
    this.second = undefined;
    if (second) (await second.catch(() => undefined))?.close();
  }

  /**
   * Runs `work` on the given connection when it is free, else on the second; `done` must be called
   * once the statement's rows are read (or it failed). Both busy: the one with fewer statements.
   */
  private async onLane<R>(work: (db: DuckDb, done: () => void) => Promise<R>): Promise<R> {
    const lane = this.busy[0]! <= this.busy[1]! ? 0 : 1;
    this.busy[lane]!++;
    let counted = true;
    const done = (): void => {
      if (counted) this.busy[lane]!--;
      counted = false;
    };
    try {
      const db = lane === 0 ? this.db : await (this.second ??= this.db.sibling());
      return await work(db, done);
    } catch (err) {
      done();
      throw err;
    }
  }
}

/** A started query's reader; `done` called if it failed to start (its rows will never be read). */
async function started<R>(starting: Promise<R>, done: () => void): Promise<R> {
  try {
    return await starting;
  } catch (err) {
    done();
    throw err;
  }
}
