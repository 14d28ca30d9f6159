/** Types of the portable SQL stage: what runs a query, and what the table placeholders become. */

/** The minimal database handle the SQL stage needs (DuckDB locally, Athena on AWS). */
export interface Queryable {
  all<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /**
   * Starts a query and resolves once the engine is running it; the function it gives reads the
   * rows. Lets JavaScript compute while the engine executes on its own threads (DuckDB), where
   * `all` would start the query only after that JavaScript returned. Optional: SqlLibrary.start
   * falls back to `all`.
   */
  start?<T = Record<string, unknown>>(sql: string): Promise<() => Promise<T[]>>;
  /**
   * Starts a query as `start` does; the function it gives hands the rows to `each` a chunk at a
   * time, so that a caller that reduces them need not hold them all (DuckDB). Optional:
   * SqlLibrary.startChunks falls back to `start`, whose rows come as one chunk.
   */
  startChunks?<T = Record<string, unknown>>(sql: string, options?: ChunkOptions): Promise<(each: (rows: T[]) => void) => Promise<void>>;
  /**
   * A name the engine reads the rows of `sql` by, computed once per distinct text (a temporary
   * table): SqlLibrary hands it the queries that a query includes (`{{query:<name>}}`), so that
   * several queries including the same one over the same sources compute it once. Optional: without
   * it every included query is inlined as a subquery (Athena, where a table costs a CTAS).
   */
  materialize?(sql: string): Promise<string>;
}

/**
 * How a chunked query's rows are read (Queryable.startChunks). An engine may leave the options
 * aside and give every value: a caller reads the rows the same either way.
 */
export interface ChunkOptions {
  /**
   * Text columns read only in the rows where another column holds a value; undefined elsewhere.
   * `{ note: { column: 'kind', is: 'free' } }` reads `note` only in rows whose `kind` is `free`:
   * for a caller that needs a long text in a few of its rows, since each text longer than 12 bytes
   * read from DuckDB is a native call and a new string.
   */
  readonly textOnlyWhere?: Readonly<Record<string, { readonly column: string; readonly is: string }>>;
}

/**
 * What each placeholder of a query becomes: a `(SELECT … read_parquet(…))` subquery, a Glue table
 * filtered to one campaign, or a plain table name. `prompts`, `replies` and `readings` are the
 * campaign tables; a battery may name further sources (e.g. the readings of several phases).
 */
export interface TableSources {
  readonly prompts: string;
  readonly replies: string;
  readonly readings: string;
  readonly [source: string]: string;
}

/** The sources one rendering is given: only those its query uses must be there. */
export type SourceMap = Readonly<Record<string, string | undefined>>;
