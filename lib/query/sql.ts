/**
 * The portable SQL stage (DESIGN.md "The flow of one campaign": SQL aggregates replies to item
 * level). Query files run unchanged on DuckDB and Athena (Trino); only their placeholders differ,
 * and a library fills them: `{{prompts}}`, `{{replies}}`, `{{readings}}` (or any other source name
 * the caller gives) by table expressions, `{{query:<name>}}` by another query of the library or of
 * a library it includes, as a parenthesised subquery. Only the placeholders a query actually uses
 * need a source.
 *
 * Every battery has its own library (its `sql/` folder) that includes the core one (chosen reply,
 * one reading). A library reads its files next to the module that declares it; a Lambda bundle
 * copies every library's files into one `sql/` folder beside the bundle, so query names are unique
 * across libraries (lib/batteries/registry checks it).
 */
import { readFileSync } from 'node:fs';
import { AnalysisError, analysisQueryError } from './errors.js';
import type { ChunkOptions, Queryable, SourceMap } from './types.js';

const PLACEHOLDER = /\{\{\s*([a-z_]+)(?::([a-z0-9_]+))?\s*\}\}/g;
const INCLUDE = /\{\{\s*query:([a-z0-9_]+)\s*\}\}/g;

/** A folder of portable queries, by name, and the libraries its queries may include. */
export class SqlLibrary {
  private readonly cache = new Map<string, string>();

  /**
   * @param name shown in errors (the battery's name, `core`)
   * @param dir the folder of the `.sql` files (`new URL('./sql/', import.meta.url)`)
   * @param queries the queries of this folder, in the order an analysis runs them
   * @param includes libraries whose queries `{{query:<name>}}` may name too
   */
  constructor(
    readonly name: string,
    private readonly dir: URL,
    readonly queries: readonly string[],
    readonly includes: readonly SqlLibrary[] = [],
  ) {}

  /** Whether this library or one it includes has the query. */
  has(query: string): boolean {
    return this.queries.includes(query) || this.includes.some((l) => l.has(query));
  }

  /** The text of a query as its file holds it. */
  text(query: string): string {
    if (!this.queries.includes(query)) {
      const owner = this.includes.find((l) => l.has(query));
      if (owner) return owner.text(query);
      throw new AnalysisError(`unknown ${this.name} query "${query}"; use one of ${this.allQueries().join(', ')}`);
    }
    let text = this.cache.get(query);
    if (text === undefined) {
      text = readFileSync(new URL(`${query}.sql`, this.dir), 'utf8');
      this.cache.set(query, text);
    }
    return text;
  }

  /**
   * The `.sql` file of every query this library renders, its includes' too: what a Lambda bundle
   * copies beside itself for a battery it carries (infra/constructs/bundling.ts).
   */
  sourceFiles(): URL[] {
    const own = this.queries.map((q) => new URL(`${q}.sql`, this.dir));
    return [...new Map([...own, ...this.includes.flatMap((l) => l.sourceFiles())].map((u) => [u.href, u])).values()];
  }

  /** Every query this library can render: its own, then those of the libraries it includes. */
  allQueries(): string[] {
    return [...new Set([...this.queries, ...this.includes.flatMap((l) => l.allQueries())])];
  }

  /**
   * The SQL of one query with its placeholders filled.
   * @example battery.analysis.sql.render('item_shares', { prompts: 'p', replies: 'r', readings: 'g' })
   */
  render(query: string, tables: SourceMap): string {
    return this.renderIn(query, tables, [], new Map());
  }

  /**
   * The SQL of one query for `db`: where the engine can keep a subquery's rows (Queryable.materialize),
   * each query it includes, innermost first, is computed once and read by name; else as `render`.
   */
  private async renderFor(db: Queryable, query: string, tables: SourceMap): Promise<string> {
    if (db.materialize === undefined) return this.render(query, tables);
    const kept = new Map<string, string>();
    const keep = async (name: string, stack: readonly string[]): Promise<void> => {
      if (stack.includes(name)) throw includesItself(name, stack);
      for (const [, include] of this.text(name).matchAll(INCLUDE)) {
        if (include === undefined || kept.has(include)) continue;
        await keep(include, [...stack, name]);
        // A database error making it names the query that includes it, as when it is inlined.
        kept.set(include, await db.materialize!(this.renderIn(include, tables, [...stack, name], kept)).catch(named(stack[0] ?? name)));
      }
    };
    await keep(query, []);
    return this.renderIn(query, tables, [], kept);
  }

  private renderIn(query: string, tables: SourceMap, stack: readonly string[], kept: ReadonlyMap<string, string>): string {
    if (stack.includes(query)) throw includesItself(query, stack);
    return this.text(query).replace(PLACEHOLDER, (whole, key: string, arg?: string) => {
      if (key === 'query' && arg !== undefined) return kept.get(arg) ?? `(\n${this.renderIn(arg, tables, [...stack, query], kept).trimEnd()}\n)`;
      if (arg !== undefined) throw new AnalysisError(`${query}.sql: unknown placeholder ${whole}; use {{<table>}} or {{query:<name>}}`);
      const source = Object.hasOwn(tables, key) ? tables[key] : undefined;
      if (typeof source !== 'string' || source.trim() === '') {
        throw new AnalysisError(`render(${stack[0] ?? query}): no source for table "${key}"; pass ${key} (the query reads it)`);
      }
      return source;
    });
  }

  /**
   * Renders a query and runs it; a database error is rethrown naming the query, with the original as
   * cause (a query still running passes through, named: lib/query/errors.ts analysisQueryError).
   */
  async run<T = Record<string, unknown>>(db: Queryable, query: string, tables: SourceMap): Promise<T[]> {
    const sql = await this.renderFor(db, query, tables);
    return db.all<T>(sql).catch(named(query));
  }

  /**
   * Renders a query and starts it (Queryable.start); the function it resolves to reads the rows,
   * with the errors `run` gives. Compute what does not need the rows before reading them.
   * @example const agreement = await library.start(db, 'reading_agreement', tables); estimate(rows); parse(await agreement());
   */
  async start<T = Record<string, unknown>>(db: Queryable, query: string, tables: SourceMap): Promise<() => Promise<T[]>> {
    const sql = await this.renderFor(db, query, tables);
    if (db.start === undefined) {
      const rows = db.all<T>(sql);
      // Read (and its error thrown) by the caller; until then it must not count as unhandled.
      rows.catch(() => undefined);
      return () => rows.catch(named(query));
    }
    const read = await db.start<T>(sql).catch(named(query));
    return () => read().catch(named(query));
  }

  /**
   * Renders a query and starts it as `start` does; the function it resolves to hands the rows to
   * `each` a chunk at a time with the index of the chunk's first row in the result (where the
   * engine has no Queryable.startChunks, all rows as one chunk). A database error is rethrown as
   * `run` does; an error thrown by `each` passes through as it is.
   * @example const read = await library.startChunks(db, 'item_shares', tables); await read((rows, offset) => add(parse(rows, offset)));
   */
  async startChunks<T = Record<string, unknown>>(
    db: Queryable,
    query: string,
    tables: SourceMap,
    options?: ChunkOptions,
  ): Promise<(each: (rows: T[], offset: number) => void) => Promise<void>> {
    if (db.startChunks === undefined) {
      const read = await this.start<T>(db, query, tables);
      return async (each) => each(await read(), 0);
    }
    const sql = await this.renderFor(db, query, tables);
    const read = await db.startChunks<T>(sql, options).catch(named(query));
    return (each) => {
      let offset = 0;
      let thrown: { readonly error: unknown } | undefined;
      return read((rows) => {
        try {
          each(rows, offset);
        } catch (error) {
          thrown = { error };
          throw error;
        }
        offset += rows.length;
      }).catch((err: unknown) => {
        if (thrown !== undefined && err === thrown.error) throw err;
        return named(query)(err);
      });
    };
  }
}

/** A database error of `query` rethrown naming its file (analysisQueryError). */
function named(query: string): (err: unknown) => never {
  return (err) => {
    throw analysisQueryError(`${query}.sql`, err);
  };
}

function includesItself(query: string, stack: readonly string[]): AnalysisError {
  return new AnalysisError(`analysis query ${query}.sql includes itself (${[...stack, query].join(' → ')})`);
}

/** The queries every battery shares: one reply per item (chosen_replies), one reading per item and reader (one_reading). */
export const CORE_SQL = new SqlLibrary('core', new URL('./sql/', import.meta.url), ['chosen_replies', 'one_reading']);

/**
 * A DuckDB table expression over Parquet files in the hive layout (`…/model=m/language=l/part-*.parquet`).
 * Partition values stay strings (a model called `007` must not become the number 7); files written
 * at different times may differ in nullable columns, hence `union_by_name`.
 * @example parquetSource('/data/campaigns/demo/generate/replies/** /*.parquet')
 */
export function parquetSource(globs: string | readonly string[]): string {
  const list = (typeof globs === 'string' ? [globs] : [...globs]).map((g) => `'${g.replaceAll("'", "''")}'`);
  if (list.length === 0) throw new AnalysisError('parquetSource: no file pattern given');
  return `(SELECT * FROM read_parquet([${list.join(', ')}], hive_partitioning = true, hive_types_autocast = false, union_by_name = true))`;
}
