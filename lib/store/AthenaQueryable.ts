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

/** The key of a query among the started ones (`AthenaResume.started`): short, the same for the same query (sameQueryKey). */
export function queryKey(sql: string): string {
  return createHash('sha256').update(sameQueryKey(sql)).digest('hex').slice(0, 32);
}

/** The ClientRequestToken of a query (Athena takes 32 to 128 characters). */
function requestToken(seed: string, sql: string): string {
  return createHash('sha256').update(`sondage-report\n${seed}\n${sameQueryKey(sql)}`).digest('hex');
}

type Value = string | number | boolean | null;

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
    const execution = await this.describe(queryExecutionId);
    if (execution.Status?.State !== 'SUCCEEDED' || execution.Query === undefined) return false;
    this.adopted.set(sameQueryKey(execution.Query), queryExecutionId);
    return true;
  }

  async all<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    // Once time ran short every query waits for the next instance, even if the analysis went on.
    if (this.running) throw this.running;
    const id = this.adopted.get(sameQueryKey(sql)) ?? (await this.run(sql));
    this.executions.push(id);
    return (await this.results(id, sql)) as T[];
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
    return out.QueryExecution;
  }

  /** Every page of the results; the header row Athena puts first on the first page is dropped. */
  private async results(id: string, sql: string): Promise<Record<string, Value>[]> {
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

