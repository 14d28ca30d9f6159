/**
 * An Athena-speaking server on 127.0.0.1 for tests ("Endpoints overridable, so they are
 * tested against local servers"). It answers the JSON 1.1 protocol the AWS SDK speaks
 * (`X-Amz-Target: AmazonAthena.<Operation>`) for StartQueryExecution, GetQueryExecution,
 * GetQueryResults and StopQueryExecution, and runs each query on DuckDB over local Parquet.
 *
 * The Glue tables of infra/constructs/Analytics.ts are views `"<database>".<battery>_prompts`
 * (one per registered battery), `replies` and `readings` over
 * `<dataDir>/campaigns/<campaign_key>/<phase_key>/<table>/model=<m>/language=<l>/*.parquet`,
 * with the four partition keys taken from the path, as partition projection does on S3.
 *
 * What it imitates from Athena, so that clients are tested against it: a query is QUEUED, then
 * RUNNING for a few polls before it SUCCEEDED or FAILED (with a StateChangeReason); results are
 * strings with the column types beside them, NULL has no VarCharValue, the first page starts with
 * a header row, pages hold at most 1000 rows; result reuse answers a repeated query text in the
 * same workgroup from the earlier run without running it again; a StartQueryExecution repeated with
 * the same ClientRequestToken answers the execution it started (a different query with it is
 * refused). A test can hold queries RUNNING for a while of the server's clock (`holdRunning`, with
 * `now` a fake clock), as a long query or a busy queue would.
 *
 * @example
 * const athena = await startAthenaServer({ dataDir, database: 'sondage_test' });
 * const client = new AthenaClient({ endpoint: athena.url, region: 'us-east-1', credentials: { accessKeyId: 't', secretAccessKey: 't' } });
 * …
 * await athena.close();
 */
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection, DuckDBType, JS } from '@duckdb/node-api';
import { glueTableName } from '../../lib/analysis/athena.js';
import { allBatteries } from '../../lib/batteries/index.js';
import { tableColumns } from '../../lib/store/schemas.js';
import type { TableName } from '../../lib/store/types.js';
import { closeServer, createBodyServer, jsonBody, listenLocal, sendJson } from './localServer.js';

export interface AthenaServerOptions {
  /** Folder holding `campaigns/…` (a local run's data directory). */
  readonly dataDir: string;
  /** Name of the Glue database the tables are registered under. */
  readonly database: string;
  /** Workgroups that exist; StartQueryExecution in another one is refused. Default: any. */
  readonly workgroups?: readonly string[];
  /** GetQueryExecution calls answered QUEUED/RUNNING before the final state (default 2). */
  readonly pollsBeforeDone?: number;
  /** Rows per GetQueryResults page at most, below the client's MaxResults (default 1000). */
  readonly pageSize?: number;
  /**
   * Called before each query runs, before the tables are read: a test whose Parquet lives in a
   * stand-in bucket copies it into `dataDir` here, as Athena reads what is in S3 at query time.
   */
  readonly beforeQuery?: () => Promise<void>;
  /** The server's clock, in ms (submission times, result reuse's age, `holdRunning`). Default Date.now. */
  readonly now?: () => number;
  /**
   * Where query results go, as the workgroup's result location does on Athena: a succeeded query's
   * rows are written as `<location><QueryExecutionId>.csv` through `write` (the S3 stand-in), and
   * GetQueryExecution names that file in ResultConfiguration.OutputLocation. Default: no file, and
   * an OutputLocation under `s3://athena-results/`.
   */
  readonly results?: { readonly location: string; write(location: string, body: Buffer): Promise<void> };
}

/**
 * A query's result file as Athena writes it (DML results are CSV, `<QueryExecutionId>.csv`): a
 * header row of the column names, then one line per row, every value in double quotes with inner
 * quotes doubled, NULL an empty field without quotes (so an empty string, `""`, stays apart from it).
 */
export function athenaCsv(columns: readonly { name: string }[], rows: readonly (readonly (string | undefined)[])[]): string {
  const field = (v: string | undefined): string => (v === undefined ? '' : `"${v.replaceAll('"', '""')}"`);
  return [columns.map((c) => field(c.name)).join(','), ...rows.map((r) => r.map(field).join(','))].map((line) => `${line}\n`).join('');
}

export type QueryState = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

/** One execution as the server keeps it (tests read these). */
export interface ServerExecution {
  readonly id: string;
  readonly query: string;
  readonly workgroup: string;
  readonly database: string | undefined;
  /** The StartQueryExecution request's ResultReuseConfiguration, as sent. */
  readonly reuseRequested: { readonly enabled: boolean; readonly maxAgeMinutes: number | undefined };
  /** Answered from an earlier execution's results without running. */
  readonly reused: boolean;
  /** The execution whose results (and result file) a reused one answers with. */
  reusedFrom?: string;
  readonly submittedAt: number;
  /** The StartQueryExecution request's ClientRequestToken, if it sent one. */
  readonly token: string | undefined;
  /** Answered QUEUED/RUNNING until the server's clock reaches this (`holdRunning`). */
  heldUntil?: number;
  state: QueryState;
  reason?: string;
  polls: number;
  columns?: { name: string; type: string }[];
  rows?: (string | undefined)[][];
}

export interface AthenaServer {
  readonly url: string;
  /** Every request, in order: operation name and parsed body. */
  readonly calls: { readonly operation: string; readonly body: Record<string, unknown> }[];
  readonly executions: ReadonlyMap<string, ServerExecution>;
  /** Queries that ran on DuckDB (reused and failed-at-start ones excluded). */
  readonly ranQueries: () => number;
  /** The next started query ends in `state` with `reason` instead of running (one-shot). */
  failNext(state: 'FAILED' | 'CANCELLED', reason: string): void;
  /**
   * Asked for each query that starts running: ms of the server's clock it stays QUEUED/RUNNING
   * (GetQueryExecution says so, GetQueryResults refuses) however soon it is done; undefined: no hold.
   */
  holdRunning: ((execution: ServerExecution) => number | undefined) | undefined;
  pageSize: number;
  close(): Promise<void>;
}


const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const quoteString = (value: string): string => `'${value.replaceAll("'", "''")}'`;

/** DuckDB type → the type name Athena (Trino) reports in ColumnInfo.Type. */
function athenaTypeOf(type: DuckDBType): string {
  const name = type.toString().toUpperCase();
  if (name.startsWith('DECIMAL')) return name.toLowerCase();
  switch (name) {
    case 'BIGINT':
    case 'HUGEINT':
    case 'UBIGINT':
    case 'UINTEGER':
      return 'bigint';
    case 'INTEGER':
    case 'USMALLINT':
      return 'integer';
    case 'SMALLINT':
    case 'UTINYINT':
      return 'smallint';
    case 'TINYINT':
      return 'tinyint';
    case 'DOUBLE':
      return 'double';
    case 'FLOAT':
      return 'real';
    case 'BOOLEAN':
      return 'boolean';
    case 'DATE':
      return 'date';
    case 'TIMESTAMP':
      return 'timestamp';
    default:
      return 'varchar';
  }
}

/** A double as Java's Double.toString writes it (Athena's text form): `3.0`, `0.25`, `1.0E-4`. */
export function javaDouble(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(x);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(x);
    return s.includes('.') ? s : `${s}.0`;
  }
  const [mantissa, exponent] = x.toExponential().split('e') as [string, string];
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${exponent.replace('+', '')}`;
}

function text(value: JS, type: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'number') return type === 'double' || type === 'real' ? javaDouble(value) : String(value);
  if (typeof value === 'bigint' || typeof value === 'boolean' || typeof value === 'string') return String(value);
  if (value instanceof Date) return value.toISOString().replace('T', ' ').replace('Z', '');
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

class AthenaException extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** Starts the server; `close()` stops it and its DuckDB. */
export async function startAthenaServer(options: AthenaServerOptions): Promise<AthenaServer> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '256MB' });
  const connection: DuckDBConnection = await instance.connect();
  const executions = new Map<string, ServerExecution>();
  const work = new Map<string, Promise<void>>();
  const calls: { operation: string; body: Record<string, unknown> }[] = [];
  const state = { pageSize: options.pageSize ?? 1000, ran: 0, next: 0, failNext: undefined as { state: 'FAILED' | 'CANCELLED'; reason: string } | undefined };
  const pollsBeforeDone = options.pollsBeforeDone ?? 2;
  const now = options.now ?? Date.now;
  const tokens = new Map<string, ServerExecution>();
  let holdRunning: AthenaServer['holdRunning'];
  // One DuckDB connection runs one statement at a time.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const next = queue.then(f, f);
    queue = next.catch(() => undefined);
    return next;
  };

  /** (Re)creates the Glue views, so files written after start are seen, as on S3. */
  async function registerTables(): Promise<void> {
    await connection.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(options.database)}`);
    const views = [
      ...allBatteries().map((b) => ({ name: glueTableName(b.name, 'prompts'), table: 'prompts' as TableName, prompts: b.prompts })),
      ...(['replies', 'readings'] as const).map((t) => ({ name: t, table: t as TableName, prompts: undefined })),
    ];
    for (const { name, table, prompts } of views) {
      const glob = path.join(path.resolve(options.dataDir), 'campaigns', '*', '*', table, '**', '*.parquet');
      const files = await connection.runAndReadAll(`SELECT count(*) AS n FROM glob(${quoteString(glob)})`);
      const found = Number(files.getRowsJS()[0]?.[0] ?? 0) > 0;
      const pattern = `/campaigns/([^/]+)/([^/]+)/${table}/`;
      const source = found
        ? `SELECT * EXCLUDE (filename), regexp_extract(filename, ${quoteString(pattern)}, 1) AS campaign_key, ` +
          `regexp_extract(filename, ${quoteString(pattern)}, 2) AS phase_key ` +
          `FROM read_parquet(${quoteString(glob)}, hive_partitioning = true, hive_types_autocast = false, union_by_name = true, filename = true)`
        : `SELECT ${[...tableColumns(table, prompts).map((c) => `NULL::${c.type} AS ${quoteIdent(c.name)}`), ...['model', 'language', 'campaign_key', 'phase_key'].map((c) => `NULL::VARCHAR AS ${c}`)].join(', ')} WHERE false`;
      await connection.run(`CREATE OR REPLACE VIEW ${quoteIdent(options.database)}.${quoteIdent(name)} AS ${source}`);
    }
  }

  /**
   * Athena refuses a query on a table with injected projection unless every read of it names the
   * injected keys by equality or IN over literals (infra/constructs/Analytics.ts: campaign_key,
   * phase_key, model). The same check here, on each `"<database>"."<table>" WHERE …` of the query.
   */
  function projectionViolation(query: string): string | undefined {
    const db = options.database.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const read = new RegExp(`(?:"${db}"|\\b${db})\\.(?:"(\\w+)"|(\\w+))(?:\\s+(?:AS\\s+)?(?!WHERE\\b)\\w+)?(\\s+WHERE\\s+[^()]*(?:\\([^()]*\\)[^()]*)*)?`, 'gi');
    for (const m of query.matchAll(read)) {
      const where = m[3] ?? '';
      for (const key of ['campaign_key', 'phase_key', 'model']) {
        if (!new RegExp(`\\b${key}\\s*(?:=\\s*'|IN\\s*\\(\\s*')`, 'i').test(where)) {
          return `CONSTRAINT_VIOLATION: For the injected projected partition column ${key}, the WHERE clause must contain only static equality conditions, and at least one such condition must be present.`;
        }
      }
    }
    return undefined;
  }

  async function execute(e: ServerExecution): Promise<void> {
    try {
      const done = await serial(async () => {
        await options.beforeQuery?.();
        await registerTables();
        const result = await connection.runAndReadAll(e.query);
        state.ran++;
        const columns = result.columnNames().map((name, i) => ({ name, type: athenaTypeOf(result.columnType(i)) }));
        return { columns, rows: result.getRowsJS().map((row) => row.map((v, i) => text(v, columns[i]!.type))) };
      });
      // A query stopped while it ran stays CANCELLED, without results.
      if (e.state === 'CANCELLED') return;
      e.columns = done.columns;
      e.rows = done.rows;
      if (options.results) await options.results.write(outputOf(e), Buffer.from(athenaCsv(done.columns, done.rows), 'utf8'));
      e.state = 'SUCCEEDED';
    } catch (err) {
      if (e.state === 'CANCELLED') return;
      e.state = 'FAILED';
      e.reason = `GENERIC_USER_ERROR: ${(err as Error).message}`;
    }
  }

  function find(body: Record<string, unknown>): ServerExecution {
    const id = body.QueryExecutionId;
    const e = typeof id === 'string' ? executions.get(id) : undefined;
    if (!e) throw new AthenaException('InvalidRequestException', `QueryExecution ${String(id)} was not found`);
    return e;
  }

  /** Where an execution's result file is (a reused one's is the run it reused, as Athena points to it). */
  function outputOf(e: ServerExecution): string {
    return `${options.results?.location ?? 's3://athena-results/'}${e.reusedFrom ?? e.id}.csv`;
  }

  function describe(e: ServerExecution): Record<string, unknown> {
    return {
      QueryExecutionId: e.id,
      Query: e.query,
      StatementType: 'DML',
      WorkGroup: e.workgroup,
      QueryExecutionContext: e.database === undefined ? {} : { Database: e.database },
      ResultConfiguration: { OutputLocation: outputOf(e) },
      ResultReuseConfiguration: { ResultReuseByAgeConfiguration: { Enabled: e.reuseRequested.enabled, ...(e.reuseRequested.maxAgeMinutes === undefined ? {} : { MaxAgeInMinutes: e.reuseRequested.maxAgeMinutes }) } },
      Status: {
        State: e.state,
        ...(e.reason === undefined ? {} : { StateChangeReason: e.reason, AthenaError: { ErrorCategory: 2, ErrorType: 1006, ErrorMessage: e.reason } }),
        SubmissionDateTime: e.submittedAt / 1000,
      },
      Statistics: {
        DataScannedInBytes: e.reused ? 0 : 1024,
        ResultReuseInformation: { ReusedPreviousResult: e.reused },
      },
    };
  }

  async function handle(operation: string, body: Record<string, unknown>): Promise<unknown> {
    switch (operation) {
      case 'StartQueryExecution': {
        const query = body.QueryString;
        if (typeof query !== 'string' || query.trim() === '') throw new AthenaException('InvalidRequestException', 'QueryString is required');
        const workgroup = typeof body.WorkGroup === 'string' ? body.WorkGroup : 'primary';
        if (options.workgroups && !options.workgroups.includes(workgroup)) {
          throw new AthenaException('InvalidRequestException', `WorkGroup ${workgroup} is not found.`);
        }
        const database = (body.QueryExecutionContext as { Database?: string } | undefined)?.Database;
        const reuse = (body.ResultReuseConfiguration as { ResultReuseByAgeConfiguration?: { Enabled?: boolean; MaxAgeInMinutes?: number } } | undefined)
          ?.ResultReuseByAgeConfiguration;
        const reuseRequested = { enabled: reuse?.Enabled === true, maxAgeMinutes: reuse?.MaxAgeInMinutes };
        const token = typeof body.ClientRequestToken === 'string' ? body.ClientRequestToken : undefined;
        const same = token === undefined ? undefined : tokens.get(token);
        if (same) {
          if (same.query !== query || same.workgroup !== workgroup || same.database !== database) {
            throw new AthenaException('InvalidRequestException', 'Idempotent parameters do not match');
          }
          return { QueryExecutionId: same.id };
        }
        const at = now();
        const maxAgeMs = (reuseRequested.maxAgeMinutes ?? 60) * 60_000;
        const earlier = reuseRequested.enabled
          ? [...executions.values()].find((x) => x.query === query && x.workgroup === workgroup && x.state === 'SUCCEEDED' && !(x.heldUntil !== undefined && at < x.heldUntil) && at - x.submittedAt <= maxAgeMs)
          : undefined;
        const id = `q-${String(++state.next).padStart(4, '0')}`;
        const e: ServerExecution = { id, query, workgroup, database, reuseRequested, reused: earlier !== undefined && state.failNext === undefined, submittedAt: at, token, state: 'QUEUED', polls: 0 };
        executions.set(id, e);
        if (token !== undefined) tokens.set(token, e);
        const failure = state.failNext;
        state.failNext = undefined;
        if (failure) {
          e.state = failure.state;
          e.reason = failure.reason;
        } else if (earlier) {
          e.reusedFrom = earlier.reusedFrom ?? earlier.id;
          e.columns = earlier.columns;
          e.rows = earlier.rows;
          e.state = 'SUCCEEDED';
        } else if (database !== options.database) {
          e.state = 'FAILED';
          e.reason = `SCHEMA_NOT_FOUND: Schema '${database ?? ''}' does not exist`;
        } else if (projectionViolation(query) !== undefined) {
          e.state = 'FAILED';
          e.reason = projectionViolation(query);
        } else {
          const hold = holdRunning?.(e);
          if (hold !== undefined) e.heldUntil = at + hold;
          work.set(id, execute(e));
        }
        return { QueryExecutionId: id };
      }
      case 'GetQueryExecution': {
        const e = find(body);
        const pending = work.get(e.id);
        if (pending && e.heldUntil !== undefined && now() < e.heldUntil) {
          e.polls++;
          return { QueryExecution: { ...describe(e), Status: { State: e.polls === 1 ? 'QUEUED' : 'RUNNING', SubmissionDateTime: e.submittedAt / 1000 } } };
        }
        if (pending) {
          e.polls++;
          if (e.polls <= pollsBeforeDone) return { QueryExecution: { ...describe(e), Status: { State: e.polls === 1 ? 'QUEUED' : 'RUNNING', SubmissionDateTime: e.submittedAt / 1000 } } };
          await pending;
          work.delete(e.id);
        }
        return { QueryExecution: describe(e) };
      }
      case 'GetQueryResults': {
        const e = find(body);
        if (work.has(e.id) || e.state !== 'SUCCEEDED' || !e.rows || !e.columns) {
          throw new AthenaException('InvalidRequestException', `Query has not yet finished. Current state: ${work.has(e.id) ? 'RUNNING' : e.state}`);
        }
        const max = body.MaxResults === undefined ? 1000 : Number(body.MaxResults);
        if (!Number.isInteger(max) || max < 1 || max > 1000) {
          throw new AthenaException('InvalidRequestException', `MaxResults must be between 1 and 1000, got ${String(body.MaxResults)}`);
        }
        const limit = Math.min(max, state.pageSize);
        // Positions count the header row, which is row 0 of the first page (as in Athena).
        const start = typeof body.NextToken === 'string' ? Number(body.NextToken) : 0;
        const header = e.columns.map((c) => c.name);
        const all = (i: number): (string | undefined)[] => (i === 0 ? header : e.rows![i - 1]!);
        const total = e.rows.length + 1;
        const end = Math.min(start + limit, total);
        const rows = [];
        for (let i = start; i < end; i++) rows.push({ Data: all(i).map((v) => (v === undefined ? {} : { VarCharValue: v })) });
        return {
          ResultSet: {
            Rows: rows,
            ResultSetMetadata: { ColumnInfo: e.columns.map((c) => ({ CatalogName: 'hive', SchemaName: '', TableName: '', Name: c.name, Label: c.name, Type: c.type, Precision: 0, Scale: 0, Nullable: 'UNKNOWN', CaseSensitive: c.type === 'varchar' })) },
          },
          UpdateCount: 0,
          ...(end < total ? { NextToken: String(end) } : {}),
        };
      }
      case 'StopQueryExecution': {
        const e = find(body);
        if (e.state === 'QUEUED' || e.state === 'RUNNING' || work.has(e.id)) {
          e.state = 'CANCELLED';
          e.reason = 'Query cancelled by user';
          e.columns = undefined;
          e.rows = undefined;
          work.delete(e.id);
        }
        return {};
      }
      default:
        throw new AthenaException('UnknownOperationException', `${operation} is not served by the test server`);
    }
  }

  const server = createBodyServer((req, res, raw) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('AmazonAthena.') ? target.slice('AmazonAthena.'.length) : target;
    const reply = (status: number, payload: unknown): void =>
      sendJson(res, status, payload, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': `req-${calls.length}` });
    let body: Record<string, unknown>;
    try {
      body = jsonBody(raw);
    } catch {
      reply(400, { __type: 'SerializationException', Message: 'body is not JSON' });
      return;
    }
    calls.push({ operation, body });
    handle(operation, body).then(
      (payload) => reply(200, payload),
      (err: unknown) => {
        if (err instanceof AthenaException) reply(400, { __type: err.type, Message: err.message });
        else reply(500, { __type: 'InternalServerException', Message: (err as Error).message });
      },
    );
  });

  const { url } = await listenLocal(server);
  return {
    url,
    calls,
    executions,
    ranQueries: () => state.ran,
    failNext(s, reason) {
      state.failNext = { state: s, reason };
    },
    get holdRunning() {
      return holdRunning;
    },
    set holdRunning(f) {
      holdRunning = f;
    },
    get pageSize() {
      return state.pageSize;
    },
    set pageSize(n: number) {
      state.pageSize = n;
    },
    async close() {
      await Promise.allSettled([...work.values(), queue]);
      await closeServer(server);
      connection.closeSync();
      instance.closeSync();
    },
  };
}
