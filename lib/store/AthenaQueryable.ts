/**
 * The SQL stage on Athena (DESIGN.md "The flow of one campaign": Athena
 * StartQueryExecution, then a Lambda for the statistics): the portable queries of
 * lib/analysis/sql run unchanged over the Glue tables, and their rows come back as the DuckDB
 * Queryable returns them. Loaded lazily by its users (the report Lambda, `sondage results`), not
 * re-exported from lib/store/index.ts, so the local CLI never loads the AWS SDK.
 */
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import type { AthenaClientConfig, ColumnInfo, QueryExecution, Row } from '@aws-sdk/client-athena';
import { createHash } from 'node:crypto';
import { ATHENA_RESULT_REUSE_MINUTES } from '../config/sizing.js';
import { SondageError } from '../errors.js';
import { QueryStillRunning } from '../query/errors.js';
import type { Queryable } from '../query/types.js';
import { parseAthenaCsv } from './athenaCsv.js';

/** Athena ended a query in FAILED or CANCELLED, or it did not finish in time. */
export class AthenaQueryError extends SondageError {
  constructor(
    message: string,
    public readonly queryExecutionId: string | undefined,
    public readonly state: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AthenaQueryError';
  }
}

export interface AthenaQueryableOptions {
  /** The workgroup the queries run in (its settings fix the output location and the scan cutoff). */
  readonly workgroup: string;
  /** The Glue database of the prompts/replies/readings tables. */
  readonly database: string;
  /** A ready client; otherwise one is made from `clientConfig` (endpoint overridable for tests). */
  readonly client?: AthenaClient;
  readonly clientConfig?: AthenaClientConfig;
  /**
   * Athena result reuse: a query whose text ran in the workgroup within this many minutes is answered
   * from that run's results, unpaid. 0 turns reuse off. Default ATHENA_RESULT_REUSE_MINUTES (the
   * state machine's SQL step asks for the same); Athena allows up to 10080.
   */
  readonly reuseMaxAgeMinutes?: number;
  /** First wait between GetQueryExecution polls, in ms; it grows by half each poll. Default 250. */
  readonly pollInitialMs?: number;
  /** Longest wait between polls, in ms. Default 5000. */
  readonly pollMaxMs?: number;
  /** A query still running after this many ms is stopped and reported. Default 30 minutes. */
  readonly timeoutMs?: number;
  /** Rows per GetQueryResults page (Athena's maximum is 1000). */
  readonly pageSize?: number;
  /** How to wait between polls (tests pass an immediate one). */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Reads a finished query's result file (GetQueryExecution's ResultConfiguration.OutputLocation,
   * `s3://…/<QueryExecutionId>.csv`): one GetObject instead of GetQueryResults pages of 1,000 rows
   * (10,000 sequential calls for 10 M rows, past a Lambda's 15 minutes). Undefined, or a file it
   * cannot reach (undefined answer): the results are paged as before.
   */
  readonly readResultFile?: (outputLocation: string) => Promise<Uint8Array | undefined>;
  /**
   * Rows of finished executions, by QueryExecutionId, kept across instances (the report's warm
   * container): a finished query is read once per container, not once per round.
   */
  readonly resultCache?: Map<string, Record<string, Value>[]>;
  /**
   * Resumable mode (the report Lambda): wait for a query only while the caller's time allows, then
   * stop with QueryStillRunning (`stillRunning`) instead of waiting on; the queries started so far
   * (`started`) are handed to the next instance, which polls them instead of starting them again.
   * `timeoutMs` does not apply: the caller bounds how often it resumes.
   */
  readonly resume?: AthenaResume;
}

/** How a resumable AthenaQueryable waits, and what earlier instances of the same analysis started. */
export interface AthenaResume {
  /** Executions started by earlier instances of the same analysis, by queryKey(sql): polled, not started again. */
  readonly started?: Readonly<Record<string, string>>;
  /**
   * Executions earlier instances saw succeed, by queryKey, with their result file and columns: not
   * polled nor asked for results again, their rows read from the file (or the cache).
   */
  readonly finished?: Readonly<Record<string, FinishedQuery>>;
  /** Time the caller has left, in ms (Lambda: context.getRemainingTimeInMillis). */
  readonly remainingMs: () => number;
  /** Waits for a query only while more than this is left after the next wait (time to answer, and for the work after the last query). */
  readonly reserveMs: number;
  /**
   * Seeds each query's ClientRequestToken (the report: the SQL step's execution id). Athena answers a
   * StartQueryExecution repeated with the same token with the execution it started, so an invocation
   * that died after starting a query, its answer lost, does not start (and pay for) a second one.
   */
  readonly tokenSeed: string;
}

/** A query an earlier round saw succeed: where its result file is and what its columns are. */
export interface FinishedQuery {
  readonly id: string;
  readonly output: string;
  readonly columns: readonly { readonly name: string; readonly type: string }[];
}

/** The key of a query among the started ones (`AthenaResume.started`): short, the same for the same query (sameQueryKey). */
export function queryKey(sql: string): string {
  return createHash('sha256').update(sameQueryKey(sql)).digest('hex').slice(0, 32);
}

/** The ClientRequestToken of a query (Athena takes 32 to 128 characters). */
function requestToken(seed: string, sql: string): string {
  return createHash('sha256').update(`sondage-report\n${seed}\n${sameQueryKey(sql)}`).digest('hex');
}

export type Value = string | number | boolean | null;

const NUMERIC_TYPES = new Set(['tinyint', 'smallint', 'integer', 'int', 'bigint', 'real', 'float', 'double', 'decimal']);

/**
 * One GetQueryResults cell as the DuckDB Queryable gives it: numbers as numbers, booleans as
 * booleans, SQL NULL (no VarCharValue) as null, everything else as its text. `type` is Athena's
 * column type (`bigint`, `double`, `decimal(10,2)`, `varchar`…).
 * @example athenaValue('double', '1.0E-4') // 0.0001
 */
export function athenaValue(type: string | undefined, text: string | undefined): Value {
  if (text === undefined) return null;
  const base = (type ?? 'varchar').toLowerCase().replace(/\(.*$/, '').trim();
  if (base === 'boolean') {
    if (text === 'true') return true;
    if (text === 'false') return false;
    throw new SondageError(`Athena returned ${JSON.stringify(text)} for a boolean column; expected true or false`);
  }
  if (NUMERIC_TYPES.has(base)) {
    const n = Number(text);
    if (Number.isNaN(n) && text !== 'NaN') {
      throw new SondageError(`Athena returned ${JSON.stringify(text)} for a ${type} column; expected a number`);
    }
    return n;
  }
  return text;
}


/**
 * What makes two query texts the same query here: surrounding space aside, the order of the model
 * list (`model IN ('b', 'a')`) does not matter, so the plan may list the campaign's models in its
 * own order and the report still adopts the SQL step's execution. Model ids are safe path segments
 * (no quotes, commas or parentheses), so the list splits cleanly.
 */
export function sameQueryKey(sql: string): string {
  return sql.trim().replace(/\bmodel IN \(([^()]*)\)/g, (_whole, list: string) => `model IN (${list.split(',').map((m) => m.trim()).sort().join(', ')})`);
}

/** The first statement line of a query, for messages (the comments above it say nothing about which query it is). */
function excerpt(sql: string): string {
  const line = sql
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('--'));
  const text = line ?? sql.trim();
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A Queryable over Athena: StartQueryExecution in the workgroup and database (with result reuse),
 * GetQueryExecution polled with backoff, GetQueryResults paged and converted to plain rows.
 * Each call waits for its query; an analysis issues them one after another. With `resume` (the
 * report Lambda) a call waits only while the caller's time allows, then throws QueryStillRunning
 * (kept in `stillRunning`); a later instance given `started` polls the queries started so far
 * instead of starting them again.
 * @example
 * const db = new AthenaQueryable({ workgroup: 'sondage-Sondage', database: 'sondage_sondage' });
 * const rows = await db.all('SELECT 1');
 */
export class AthenaQueryable implements Queryable {
  readonly workgroup: string;
  readonly database: string;
  private readonly client: AthenaClient;
  private readonly reuseMinutes: number;
  private readonly pollInitialMs: number;
  private readonly pollMaxMs: number;
  private readonly timeoutMs: number;
  private readonly pageSize: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly resume: AthenaResume | undefined;
  /** Finished executions by query text: answered from their results instead of running again. */
  private readonly adopted = new Map<string, string>();
  private readonly executions: string[] = [];
  /** Resumable mode: executions started, by queryKey (earlier instances' and this one's). */
  private readonly startedByKey: Map<string, string>;
  private running: QueryStillRunning | undefined;
  private readonly readResultFile: AthenaQueryableOptions['readResultFile'];
  private readonly resultCache: Map<string, Record<string, Value>[]>;
  /** Resumable mode: executions seen to succeed, by queryKey (earlier instances' and this one's). */
  private readonly finishedByKey: Map<string, FinishedQuery>;
  /** The last GetQueryExecution answer of each execution (its result file's location). */
  private readonly described = new Map<string, QueryExecution>();

  constructor(options: AthenaQueryableOptions) {
    this.workgroup = options.workgroup;
    this.database = options.database;
    this.client = options.client ?? new AthenaClient(options.clientConfig ?? {});
    this.reuseMinutes = options.reuseMaxAgeMinutes ?? ATHENA_RESULT_REUSE_MINUTES;
    this.pollInitialMs = options.pollInitialMs ?? 250;
    this.pollMaxMs = options.pollMaxMs ?? 5000;
    this.timeoutMs = options.timeoutMs ?? 30 * 60_000;
    this.pageSize = Math.min(options.pageSize ?? 1000, 1000);
    this.sleep = options.sleep ?? defaultSleep;
    this.resume = options.resume;
    this.startedByKey = new Map(Object.entries(options.resume?.started ?? {}));
    this.finishedByKey = new Map(Object.entries(options.resume?.finished ?? {}));
    this.readResultFile = options.readResultFile;
    this.resultCache = options.resultCache ?? new Map();
  }

  /** Resumable mode: the executions seen to succeed so far, by queryKey, with their result files (for the next instance). */
  get finished(): Record<string, FinishedQuery> {
    return Object.fromEntries(this.finishedByKey);
  }

  /** Resumable mode: every execution started for the analysis so far, by queryKey (for the next instance). */
  get started(): Record<string, string> {
    return Object.fromEntries(this.startedByKey);
  }

  /** Resumable mode: the query this instance stopped waiting for when time ran short; it answers nothing more. */
  get stillRunning(): QueryStillRunning | undefined {
    return this.running;
  }

  /** Stops an execution (StopQueryExecution); one already ended stays as it ended. */
  async stop(queryExecutionId: string): Promise<void> {
    await this.client.send(new StopQueryExecutionCommand({ QueryExecutionId: queryExecutionId }));
  }

  /** Execution ids this instance started or adopted, in order (for logs and the report). */
  get queryExecutionIds(): readonly string[] {
    return this.executions;
  }

  /**
   * Makes a finished execution (the state machine's SQL step) answer later `all()` calls with the
   * same query text, so its scan is not paid twice. Returns false, adopting nothing, unless it
   * SUCCEEDED.
   */
  async adopt(queryExecutionId: string): Promise<boolean> {
    // Read in an earlier round: `all` answers its query from the finished ones, no Athena call.
    if ([...this.finishedByKey.values()].some((q) => q.id === queryExecutionId)) return true;
    const execution = await this.describe(queryExecutionId);
    if (execution.Status?.State !== 'SUCCEEDED' || execution.Query === undefined) return false;
    this.adopted.set(sameQueryKey(execution.Query), queryExecutionId);
    return true;
  }

  async all<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    // Once time ran short every query waits for the next instance, even if the analysis went on.
    if (this.running) throw this.running;
    // A query an earlier round saw succeed: no Athena call, its rows from its file.
    const known = this.resume ? this.finishedByKey.get(queryKey(sql)) : undefined;
    if (known) {
      this.executions.push(known.id);
      const rows = await this.fileRows(known);
      if (rows) return rows as T[];
    }
    const id = known?.id ?? this.adopted.get(sameQueryKey(sql)) ?? (await this.run(sql));
    if (!known) this.executions.push(id);
    return (await this.results(id, sql)) as T[];
  }

  /** A finished query's rows from the cache or its result file; undefined when the file cannot be read. */
  private async fileRows(q: FinishedQuery): Promise<Record<string, Value>[] | undefined> {
    const cached = this.resultCache.get(q.id);
    if (cached) return cached;
    if (!this.readResultFile) return undefined;
    const body = await this.readResultFile(q.output);
    if (body === undefined) return undefined;
    const [header, ...data] = parseAthenaCsv(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'), q.output);
    const names = q.columns.map((c) => c.name);
    if (header === undefined || header.length !== names.length || header.some((h, i) => h !== names[i])) {
      throw new AthenaQueryError(`Athena query ${q.id}: result file ${q.output} has columns ${JSON.stringify(header ?? [])}, its results say ${JSON.stringify(names)}`, q.id, 'SUCCEEDED');
    }
    const rows = data.map((cells) => {
      if (cells.length !== names.length) throw new AthenaQueryError(`Athena query ${q.id}: a row of ${q.output} has ${cells.length} values for ${names.length} columns`, q.id, 'SUCCEEDED');
      const out: Record<string, Value> = {};
      for (let i = 0; i < names.length; i++) out[names[i]!] = athenaValue(q.columns[i]!.type, cells[i]);
      return out;
    });
    this.resultCache.set(q.id, rows);
    return rows;
  }

  /**
   * Starts the query (resumable mode: unless an earlier instance started it) and waits until it
   * SUCCEEDED; FAILED, CANCELLED or a timeout throw; in resumable mode, time running short throws
   * QueryStillRunning.
   */
  private async run(sql: string): Promise<string> {
    const resume = this.resume;
    const key = resume ? queryKey(sql) : undefined;
    let id = key === undefined ? undefined : this.startedByKey.get(key);
    if (id === undefined) {
      const started = await this.client.send(
        new StartQueryExecutionCommand({
          QueryString: sql,
          WorkGroup: this.workgroup,
          QueryExecutionContext: { Database: this.database },
          ...(this.reuseMinutes > 0
            ? { ResultReuseConfiguration: { ResultReuseByAgeConfiguration: { Enabled: true, MaxAgeInMinutes: this.reuseMinutes } } }
            : {}),
          ...(resume ? { ClientRequestToken: requestToken(resume.tokenSeed, sql) } : {}),
        }),
      );
      id = started.QueryExecutionId;
      if (!id) throw new AthenaQueryError(`Athena StartQueryExecution returned no QueryExecutionId for: ${excerpt(sql)}`, undefined, undefined);
      if (key !== undefined) this.startedByKey.set(key, id);
    }
    const deadline = Date.now() + this.timeoutMs;
    let wait = this.pollInitialMs;
    for (;;) {
      const execution = await this.describe(id);
      const state = execution.Status?.State;
      if (state === 'SUCCEEDED') return id;
      if (state === 'FAILED' || state === 'CANCELLED') {
        const reason = execution.Status?.StateChangeReason ?? execution.Status?.AthenaError?.ErrorMessage ?? 'no reason given';
        throw new AthenaQueryError(`Athena query ${id} ${state}: ${reason} (query: ${excerpt(sql)})`, id, state);
      }
      if (resume) {
        if (resume.remainingMs() - wait < resume.reserveMs) {
          this.running = new QueryStillRunning(
            `Athena query ${id} still ${state ?? 'unknown'} with ${Math.round(resume.remainingMs() / 1000)} s left (query: ${excerpt(sql)})`,
            id,
            state ?? 'unknown',
            excerpt(sql),
          );
          throw this.running;
        }
      } else if (Date.now() >= deadline) {
        await this.client.send(new StopQueryExecutionCommand({ QueryExecutionId: id })).catch(() => undefined);
        throw new AthenaQueryError(
          `Athena query ${id} still ${state ?? 'unknown'} after ${Math.round(this.timeoutMs / 1000)} s; stopped it (query: ${excerpt(sql)})`,
          id,
          state,
        );
      }
      await this.sleep(wait);
      wait = Math.min(Math.ceil(wait * 1.5), this.pollMaxMs);
    }
  }

  private async describe(id: string): Promise<QueryExecution> {
    const out = await this.client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }));
    if (!out.QueryExecution) throw new AthenaQueryError(`Athena GetQueryExecution(${id}) returned no execution`, id, undefined);
    this.described.set(id, out.QueryExecution);
    return out.QueryExecution;
  }

  /**
   * A succeeded query's rows: from its result file when a reader is given (its columns from one
   * GetQueryResults of one row), noted as finished for the next instance; otherwise every page.
   */
  private async results(id: string, sql: string): Promise<Record<string, Value>[]> {
    const output = this.described.get(id)?.ResultConfiguration?.OutputLocation;
    if (this.readResultFile && output) {
      const cached = this.resultCache.get(id);
      const page = await this.client.send(new GetQueryResultsCommand({ QueryExecutionId: id, MaxResults: 1 }));
      const info = page.ResultSet?.ResultSetMetadata?.ColumnInfo;
      if (!info) throw new AthenaQueryError(`Athena query ${id}: results without column metadata (query: ${excerpt(sql)})`, id, 'SUCCEEDED');
      const finished: FinishedQuery = { id, output, columns: info.map((c, i) => ({ name: c.Name ?? `_col${i}`, type: c.Type ?? 'varchar' })) };
      const rows = cached ?? (await this.fileRows(finished));
      if (rows) {
        if (this.resume) this.finishedByKey.set(queryKey(sql), finished);
        return rows;
      }
    }
    return this.pages(id, sql);
  }

  /** Every page of the results; the header row Athena puts first on the first page is dropped. */
  private async pages(id: string, sql: string): Promise<Record<string, Value>[]> {
    const rows: Record<string, Value>[] = [];
    let columns: readonly ColumnInfo[] | undefined;
    let token: string | undefined;
    let first = true;
    do {
      const page = await this.client.send(
        new GetQueryResultsCommand({ QueryExecutionId: id, MaxResults: this.pageSize, ...(token ? { NextToken: token } : {}) }),
      );
      columns ??= page.ResultSet?.ResultSetMetadata?.ColumnInfo;
      if (!columns) throw new AthenaQueryError(`Athena query ${id}: results without column metadata (query: ${excerpt(sql)})`, id, 'SUCCEEDED');
      let data: readonly Row[] = page.ResultSet?.Rows ?? [];
      if (first && data.length > 0 && isHeader(data[0]!, columns)) data = data.slice(1);
      first = false;
      for (const row of data) rows.push(toObject(row, columns, id));
      token = page.NextToken;
    } while (token);
    return rows;
  }
}

function isHeader(row: Row, columns: readonly ColumnInfo[]): boolean {
  const cells = row.Data ?? [];
  return cells.length === columns.length && cells.every((c, i) => c.VarCharValue === (columns[i]!.Label ?? columns[i]!.Name));
}

function toObject(row: Row, columns: readonly ColumnInfo[], id: string): Record<string, Value> {
  const cells = row.Data ?? [];
  if (cells.length !== columns.length) {
    throw new AthenaQueryError(`Athena query ${id}: a result row has ${cells.length} values for ${columns.length} columns`, id, 'SUCCEEDED');
  }
  const out: Record<string, Value> = {};
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    out[column.Name ?? `_col${i}`] = athenaValue(column.Type, cells[i]!.VarCharValue);
  }
  return out;
}

