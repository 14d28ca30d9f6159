/**
 * A Queryable over one DuckDB for one analysis: the queries the SQL library includes
 * (`{{query:chosen_replies}}`, `{{query:one_reading}}`, FAR-6's `{{query:prompt_items}}`) are each
 * computed once, as a temporary table, instead of once in every query that includes them. FAR-6
 * at a million replies includes the three in three queries; keeping them took its SQL stage from
 * 10.7 s to 8.3 s (bench/README.md, "analysis"). Only for the span of one analysis over files that
 * do not change meanwhile: a kept table does not follow its Parquet files (`drop` frees them).
 */
import type { Queryable } from '../query/types.js';
import type { DuckDb } from './DuckDb.js';

export class KeptSubqueries implements Queryable {
  /** Table name by the subquery's SQL text; the promise, so that two queries asking at once share one table. */
  private readonly kept = new Map<string, Promise<string>>();
  private made = 0;

  constructor(private readonly db: DuckDb) {}

  all<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    return this.db.all<T>(sql);
  }

  start<T = Record<string, unknown>>(sql: string): Promise<() => Promise<T[]>> {
    return this.db.start<T>(sql);
  }

  startChunks<T = Record<string, unknown>>(sql: string): Promise<(each: (rows: T[]) => void) => Promise<void>> {
    return this.db.startChunks<T>(sql);
  }

  materialize(sql: string): Promise<string> {
    let name = this.kept.get(sql);
    if (name === undefined) {
      const table = `sondage_kept_${++this.made}`;
      name = this.db.run(`CREATE TEMP TABLE ${table} AS ${sql}`).then(() => table);
      // A failed table is not kept: the next query asks again (and fails naming itself).
      name.catch(() => this.kept.delete(sql));
      this.kept.set(sql, name);
    }
    return name;
  }

  /** Drops the kept tables (their memory is DuckDB's until then). */
  async drop(): Promise<void> {
    const names = await Promise.allSettled(this.kept.values());
    this.kept.clear();
    for (const n of names) if (n.status === 'fulfilled') await this.db.run(`DROP TABLE IF EXISTS ${n.value}`);
  }
}
