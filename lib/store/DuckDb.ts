import type { DuckDBConnection, DuckDBResult, DuckDBValueConverter, JS } from '@duckdb/node-api';
import path from 'node:path';
import { SondageError } from '../errors.js';
import { duckdbApi } from './duckdbApi.js';
import { DuckDbRows } from './duckdbRows.js';
import { spillingInstance } from './duckdbSpill.js';
import type { DuckDbApi } from './duckdbApi.js';
import { tablePrefix } from './layout.js';
import { PARTITION_COLUMNS, tableColumns } from './schemas.js';
import { checkStoredParts } from './storedParts.js';
import type { ChunkOptions } from '../query/types.js';
import type { ColumnDef } from './schemas.js';
import type { TableName } from './types.js';
import { sqlIdent, sqlString } from './sqlText.js';

export { sqlIdent, sqlString };

/**
 * `source` with the columns DuckDb.levelTypes coded read through their ENUM types (the rest as they are).
 * @example const prompts = codedSource('prompts', await db.levelTypes('prompts', ['story', 'form']));
 */
export function codedSource(source: string, types: ReadonlyMap<string, string>): string {
  if (types.size === 0) return source;
  return `(SELECT * REPLACE (${[...types].map(([c, type]) => `CAST(${sqlIdent(c)} AS ${type}) AS ${sqlIdent(c)}`).join(', ')}) FROM ${source} coded)`;
}

/**
 * Glob of every part file of one table of a campaign phase under a data directory.
 * @example tableGlob('/data', 'demo', 'generate', 'replies') // '/data/campaigns/demo/generate/replies/**\/*.parquet'
 */
export function tableGlob(root: string, campaign: string, phase: string, table: TableName): string {
  return `${path.resolve(root)}/${tablePrefix(campaign, phase, table)}**/*.parquet`;
}

/**
 * `read_parquet(…)` over a glob with the partition columns taken from the path. Partition values
 * stay VARCHAR (no autocast): a model id such as `7` must not turn into a number.
 */
export function readParquetSql(glob: string): string {
  return `read_parquet(${sqlString(glob)}, hive_partitioning = true, hive_types_autocast = false, union_by_name = true)`;
}

// DuckDB's JS conversion, with BIGINT/HUGEINT (counts, integer sums) as plain numbers: the
// analysis does arithmetic on them, and these values stay far below 2^53.
function numbersConverter(api: typeof DuckDbApi): DuckDBValueConverter<JS> {
  return (value, type, converter) => {
    const v = api.JSDuckDBValueConverter(value, type, converter);
    return typeof v === 'bigint' ? Number(v) : v;
  };
}

/** How often close interrupts what still runs, until it has ended. */
const INTERRUPT_EVERY_MS = 10;

/** What the connections to one DuckDB instance share: the instance, its close, how many of them are open. */
interface SharedInstance {
  readonly connect: () => Promise<DuckDBConnection>;
  /** Closes the instance and removes its spill folder: once its last connection has closed. */
  readonly close: () => void;
  open: number;
  /** Connections running a statement on one thread (oneThread), and the thread count to restore after the last. */
  narrowed: number;
  threads: number;
}

/**
 * An in-memory DuckDB for the SQL stage: queries over the campaign's Parquet files, results as
 * plain objects (BIGINT and DECIMAL as numbers). Queries on one connection run one after another;
 * `sibling` opens another, whose queries run beside them.
 *
 * @example
 * const db = await DuckDb.open();
 * await db.attachTable('replies', tableGlob(dataDir, 'demo', 'generate', 'replies'), 'replies');
 * const n = await db.all<{ model: string; n: number }>('SELECT model, count(*) AS n FROM replies GROUP BY model');
 * db.close();
 */
export class DuckDb {
  private queue: Promise<unknown> = Promise.resolve();
  /** Other connections to this database (sibling): closed with this one. */
  private readonly siblings: DuckDb[] = [];
  private closed = false;
  /** Statements queued or running (serial). */
  private active = 0;
  /** Started queries' rows not yet asked for (startChunks): close ends each unread. */
  private readonly unread = new Set<() => void>();
  /** ENUM types made by levelTypes, for names unique in this instance. */
  private levelTypeCount = 0;

  private constructor(
    private readonly connection: DuckDBConnection,
    private readonly rows: DuckDbRows,
    private readonly shared: SharedInstance,
  ) {}

  /** Opens an in-memory database. `threads` defaults to DuckDB's (all cores). */
  static async open(options: { readonly threads?: number; readonly memoryLimit?: string } = {}): Promise<DuckDb> {
    const config: Record<string, string> = {};
    if (options.threads !== undefined) config['threads'] = String(options.threads);
    // DuckDB would otherwise take up to 80 % of RAM for its buffers and keep what it took; the
    // local run shares the machine with its own JS heap (bench/local-throughput measures RSS).
    config['memory_limit'] = options.memoryLimit ?? '400MB';
    const api = await duckdbApi();
    const { instance, close } = await spillingInstance(config, (c) => api.DuckDBInstance.create(':memory:', c));
    try {
      return new DuckDb(await instance.connect(), new DuckDbRows(api, numbersConverter(api)), { connect: () => instance.connect(), close, open: 1, narrowed: 0, threads: 0 });
    } catch (err) {
      close();
      throw err;
    }
  }

  /**
   * Another connection to this database: its statements run beside this one's, on the same
   * threads and memory limit, over the same tables, views and types (not this connection's
   * temporary ones). A query started on it runs while this one's rows are still being read
   * (KeptSubqueries gives an analysis two). It is closed when this one is, or before by its own
   * close; the instance closes with the last of them.
   * @example const other = await db.sibling(); const next = await other.startChunks(sql); …
   */
  async sibling(): Promise<DuckDb> {
    if (this.closed) throw new SondageError('DuckDb is closed');
    const connection = await this.shared.connect();
    this.shared.open++;
    const db = new DuckDb(connection, this.rows, this.shared);
    if (this.closed) {
      db.close();
      throw new SondageError('DuckDb is closed');
    }
    this.siblings.push(db);
    return db;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new SondageError('DuckDb is closed'));
    this.active++;
    const counted = async (): Promise<T> => {
      try {
        // Queued before close, reached after it: not run on a connection about to close.
        if (this.closed) throw new SondageError('DuckDb is closed');
        return await work();
      } finally {
        this.active--;
      }
    };
    const next = this.queue.then(counted, counted);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Rows of a query as objects keyed by column name. */
  all<T = Record<string, JS>>(sql: string): Promise<T[]> {
    return this.serial(() => onOneThreadIfOutOfMemory(async () => this.rows.rowsOf<T>(await this.connection.stream(sql)), this.oneThread));
  }

  /**
   * Runs `work` with DuckDB on one thread, then back to its setting (onOneThreadIfOutOfMemory).
   * `threads` is the instance's, not a connection's: where two connections retry at once, the
   * first narrows it and the last puts it back.
   */
  private readonly oneThread = async <T>(work: () => Promise<T>): Promise<T> => {
    const shared = this.shared;
    if (shared.narrowed++ === 0) {
      try {
        const [setting] = (await this.connection.runAndReadAll("SELECT current_setting('threads') AS n")).getRowObjectsJS();
        shared.threads = Number(setting?.['n']);
        await this.connection.run('SET threads = 1');
      } catch (err) {
        shared.narrowed--;
        throw err;
      }
    }
    try {
      return await work();
    } finally {
      if (--shared.narrowed === 0) await this.connection.run(`SET threads = ${shared.threads}`);
    }
  };

  /** Runs `sql` streaming its result; `running` is called once DuckDB's threads have the query. */
  private async execute(sql: string, running: () => void): Promise<DuckDBResult> {
    const prepared = await this.connection.prepare(sql);
    try {
      // The call hands the query to DuckDB's threads before it returns its promise.
      const executing = prepared.stream();
      running();
      return await executing;
    } finally {
      prepared.destroySync();
    }
  }

  /**
   * Starts a query (Queryable.start): resolves once DuckDB executes it on its own threads, with a
   * function that reads its rows. Queries still run one at a time: the next waits for these rows.
   * @example const shares = await db.start(sql); identity(...); const rows = await shares();
   */
  start<T = Record<string, JS>>(sql: string): Promise<() => Promise<T[]>> {
    let running!: () => void;
    let failed!: (err: unknown) => void;
    const started = new Promise<void>((resolve, reject) => ((running = resolve), (failed = reject)));
    // Inside the queue: the connection streams these rows until they are read.
    const rows = this.serial(() => onOneThreadIfOutOfMemory(async () => this.rows.rowsOf<T>(await this.execute(sql, running)), this.oneThread));
    // Before the query ran, starting fails; after, reading its rows does.
    rows.catch(failed);
    return started.then(() => () => rows);
  }

  /**
   * Starts a query as `start` does, but the caller reads its rows a chunk at a time: the function
   * it resolves to hands each chunk to `each` and resolves after the last, so that rows need not
   * all be held at once (FAR-6's item rows: analyzeCampaign.ts). The connection streams these rows
   * until they are read: the next query waits for that. A query that runs out of memory runs once
   * more on one thread only while no chunk has been handed out; after that the error is thrown.
   * @example const read = await db.startChunks(sql); await read((rows) => { for (const r of rows) add(r); });
   */
  startChunks<T = Record<string, JS>>(sql: string, options?: ChunkOptions): Promise<(each: (rows: T[]) => void) => Promise<void>> {
    let running!: () => void;
    let failed!: (err: unknown) => void;
    const started = new Promise<void>((resolve, reject) => ((running = resolve), (failed = reject)));
    let reader!: (each: (rows: T[]) => void) => void;
    const consumer = new Promise<(rows: T[]) => void>((resolve) => (reader = resolve));
    const letGo = (): void =>
      reader(() => {
        throw new SondageError('DuckDb is closed');
      });
    this.unread.add(letGo);
    let handedOut = false;
    const done = this.serial(() =>
      onOneThreadIfOutOfMemory(
        async () => {
          const result = await this.execute(sql, running);
          const each = await consumer;
          await this.rows.eachChunk<T>(
            result,
            (rows) => {
              handedOut = true;
              each(rows);
            },
            options,
          );
        },
        this.oneThread,
        () => !handedOut,
      ),
    );
    done.catch(failed);
    // Read or failed, it has nothing left for close to end.
    const forget = (): void => void this.unread.delete(letGo);
    done.then(forget, forget);
    return started.then(() => (each) => {
      reader(each);
      return done;
    });
  }

  /**
   * Runs statements whose result is not needed (DDL, COPY), once more on one thread if DuckDB runs
   * out of memory (onOneThreadIfOutOfMemory): a statement that failed left no table behind, and a
   * COPY to a file writes it anew; a partitioned COPY into a folder must say OVERWRITE.
   */
  run(sql: string): Promise<void> {
    return this.serial(() =>
      onOneThreadIfOutOfMemory(async () => {
        await this.connection.run(sql);
      }, this.oneThread),
    );
  }

  /** True when the glob matches at least one file. */
  async hasFiles(glob: string): Promise<boolean> {
    const [row] = await this.all<{ n: number }>(`SELECT count(*) AS n FROM glob(${sqlString(glob)})`);
    return (row?.n ?? 0) > 0;
  }

  /**
   * Creates view `view` over a table's part files, with `model` and `language` from the path.
   * With no files yet, the view is empty but has the table's columns, so queries and joins still
   * run (and return nothing). Returns whether files were found.
   */
  async attachTable(view: string, glob: string, table: TableName, columns: readonly ColumnDef[] = tableColumns(table)): Promise<boolean> {
    const found = await this.hasFiles(glob);
    const have = found ? await checkStoredParts(this, glob, table, columns) : new Set<string>();
    // Parts written before a column existed (readings' facet and value) read it as NULL, as
    // lib/run/upstream.ts does: a data folder from an earlier version stays analysable.
    const missing = found ? columns.filter((c) => !(PARTITION_COLUMNS as readonly string[]).includes(c.name)).filter((c) => !have.has(c.name)) : [];
    const source = found
      ? `SELECT *${missing.map((c) => `, NULL::${c.type} AS ${sqlIdent(c.name)}`).join('')} FROM ${readParquetSql(glob)}`
      : `SELECT ${[
          ...columns.map((c) => `NULL::${c.type} AS ${sqlIdent(c.name)}`),
          ...PARTITION_COLUMNS.map((c) => `NULL::VARCHAR AS ${sqlIdent(c)}`),
        ].join(', ')} WHERE false`;
    await this.run(`CREATE OR REPLACE VIEW ${sqlIdent(view)} AS ${source}`);
    return found;
  }

  /**
   * Gives each low-cardinality text column of `source` its own ENUM type: the column's distinct
   * values in VARCHAR order, so that ORDER BY, GROUP BY, comparisons and joins with text give what
   * the text would (DuckDB compares an ENUM with a string as text). A column qualifies with 1 to
   * `maxLevels` distinct values. Returns the type per column, for `CAST(column AS type)`.
   *
   * Why: node-api turns every VARCHAR value longer than 12 bytes into JS through a native call of
   * its own (about 1 µs), and the analysis reads a few such values per row of results of up to a
   * million rows; an ENUM value is an index into its type's dictionary, read once per chunk of 2,048
   * rows. FAR-6's item_shares at full size: 8.0 s → 4.6 s, the rows identical (bench/analysis).
   * `maxLevels` bounds that dictionary, which node-api reads again for every chunk.
   * @example const types = await db.levelTypes(source, ['story', 'form']); // Map { 'story' => 'sondage_levels_1', … }
   */
  async levelTypes(source: string, columns: readonly string[], maxLevels = 1000): Promise<Map<string, string>> {
    const types = new Map<string, string>();
    if (columns.length === 0) return types;
    const [counts] = await this.all<Record<string, number>>(
      `SELECT ${columns.map((c, i) => `count(DISTINCT ${sqlIdent(c)}) AS "n${i}"`).join(', ')} FROM ${source} s`,
    );
    for (const [i, column] of columns.entries()) {
      const levels = Number(counts?.[`n${i}`] ?? 0);
      if (levels < 1 || levels > maxLevels) continue;
      const name = `sondage_levels_${++this.levelTypeCount}`;
      const col = sqlIdent(column);
      await this.run(`CREATE TYPE ${name} AS ENUM (SELECT DISTINCT CAST(${col} AS VARCHAR) FROM ${source} s WHERE ${col} IS NOT NULL ORDER BY 1)`);
      types.set(column, name);
    }
    return types;
  }

  /**
   * Closes the connection and the instance. A statement still running (a started query whose rows
   * were not read, one queued behind a statement that failed) is interrupted first, and the close
   * comes once it has ended: closing a connection under a running statement blocks this thread for
   * good, since DuckDB waits for the statement and the statement's end is handed back on this
   * thread. Statements still queued are refused ('DuckDb is closed').
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const other of this.siblings) other.close();
    if (this.active === 0) return this.closeNow();
    for (const letGo of this.unread) letGo();
    this.unread.clear();
    // An interrupt reaches only a statement DuckDB has begun; one handed over but not begun yet
    // would run to its end. So again until the last has ended (a no-op between statements).
    const interrupt = (): void => this.connection.interrupt();
    interrupt();
    const again = setInterval(interrupt, INTERRUPT_EVERY_MS);
    void this.queue.then(() => {
      clearInterval(again);
      try {
        this.closeNow();
      } catch (err) {
        // No caller is left to throw to: thrown here it would be an unhandled rejection, which
        // ends the process (and a run's threads with it) over a connection that is gone anyway.
        process.emitWarning(`DuckDb: closing the connection after its last statement failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
  }

  /**
   * Closes the connection, then the instance if it was the last one open, even when the
   * connection's close failed (the spill folder is removed either way).
   */
  private closeNow(): void {
    try {
      this.connection.closeSync();
    } finally {
      if (--this.shared.open === 0) this.shared.close();
    }
  }
}

/**
 * Runs a query's `work`, and once more on one DuckDB thread if DuckDB ran out of memory: under
 * `memory_limit` (400 MB by default here) a large sort or join on several threads, each pinning
 * its own blocks, now and then fails to pin one more (FAR-6's same_replies_shares at full size,
 * about one full run in eight) where one thread, spilling the same way, fits. The rows are
 * collected anew, so a retried query gives what it would have; any other error, or a second
 * one, is thrown.
 */
export async function onOneThreadIfOutOfMemory<T>(
  work: () => Promise<T>,
  oneThread: (work: () => Promise<T>) => Promise<T>,
  /** False once running `work` again would repeat what it already did (rows handed out). */
  mayRepeat: () => boolean = () => true,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof Error) || !/Out of Memory Error/.test(err.message) || !mayRepeat()) throw err;
    return oneThread(work);
  }
}

/**
 * Reads the Parquet files matching `glob` (hive partitions from the path) with one query, in
 * which the files are the table `parts`; `[]` when no file matches yet.
 * @example await readParquet(tableGlob(dir, 'demo', 'generate', 'replies'), 'SELECT count(*) AS n FROM parts')
 */
export async function readParquet<T = Record<string, JS>>(glob: string, sql = 'SELECT * FROM parts'): Promise<T[]> {
  const db = await DuckDb.open();
  try {
    if (!(await db.hasFiles(glob))) return [];
    await db.run(`CREATE VIEW parts AS SELECT * FROM ${readParquetSql(glob)}`);
    return await db.all<T>(sql);
  } finally {
    db.close();
  }
}
