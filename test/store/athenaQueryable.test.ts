import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { AthenaClient, GetQueryExecutionCommand, StartQueryExecutionCommand } from '@aws-sdk/client-athena';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parquetSource } from '../../lib/query/sql.js';
import { FAR6_SQL } from '../../lib/batteries/far6/sqlLibrary.js';
import { AthenaQueryable, AthenaQueryError, athenaValue, queryKey } from '../../lib/store/AthenaQueryable.js';
import { QueryStillRunning } from '../../lib/query/errors.js';
import { athenaSources, storedParts } from '../../lib/analysis/athena.js';
import type { TableSources } from '../../lib/query/types.js';
import { DuckDb, LocalBlobStore } from '../../lib/store/index.js';
import { startAthenaServer } from '../helpers/athenaServer.js';
import type { AthenaServer } from '../helpers/athenaServer.js';
import { tempDir } from '../helpers/campaigns.js';

const DATABASE = 'sondage_test';
const WORKGROUP = 'sondage-test';

let dir: string;
let cleanup: () => Promise<void>;
let server: AthenaServer;
let local: DuckDb;
let client: AthenaClient;

/** Writes one replies part in the campaign layout with DuckDB (values chosen to exercise each type). */
async function writeReplies(db: DuckDb, campaign: string, model: string, language: string, rows: string): Promise<void> {
  const folder = path.join(dir, 'campaigns', campaign, 'generate', 'replies', `model=${model}`, `language=${language}`);
  await mkdir(folder, { recursive: true });
  await db.run(
    `COPY (SELECT item_id, '${campaign}' AS campaign, 'generate' AS phase, attempt::INTEGER AS attempt, status, text,
       'stop' AS finish_reason, 10::INTEGER AS input_tokens, 5::INTEGER AS output_tokens, cost_usd::DOUBLE AS cost_usd,
       1.5::DOUBLE AS latency_ms, NULL::VARCHAR AS logprobs_json, error_class, NULL::VARCHAR AS error_message,
       '{}' AS settings_json, 'simulated' AS provider, simulated, created_at
     FROM (VALUES ${rows}) AS t(item_id, attempt, status, text, cost_usd, error_class, simulated, created_at))
     TO '${path.join(folder, 'part-0001.parquet')}' (FORMAT parquet)`,
  );
}

function queryable(extra: Partial<ConstructorParameters<typeof AthenaQueryable>[0]> = {}, sleeps: number[] = []): AthenaQueryable {
  return new AthenaQueryable({
    workgroup: WORKGROUP,
    database: DATABASE,
    client,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...extra,
  });
}

/** The far6 battery's tables on Athena for campaign c1, its generate phase. */
const athenaTableSources = (database: string, campaign: string, models: string[]): TableSources => {
  const a = athenaSources(database, 'far6', campaign, models);
  return { prompts: a.table('prompts', ['generate']), replies: a.table('replies', ['generate']), readings: a.table('readings', ['generate']) };
};
const sources = () => athenaTableSources(DATABASE, 'c1', ['m2', 'm1']);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('athena'));
  local = await DuckDb.open({ threads: 1 });
  await writeReplies(
    local,
    'c1',
    'm1',
    'en',
    `('i1', 1, 'ok', 'Yes.', 0.00000012, NULL, true, '2026-11-30T06:00:00Z'),
     ('i2', 1, 'error', NULL, 0.25, 'timeout', true, '2026-11-30T06:00:01Z'),
     ('i2', 2, 'ok', 'It''s wrong, "no".', 3, NULL, false, '2026-11-30T06:00:02Z')`,
  );
  await writeReplies(local, 'c1', 'm2', 'de', `('i3', 1, 'ok', '', 1e9, NULL, false, '2026-11-30T06:00:03Z')`);
  // Another campaign and another model in the same tables: the table sources must keep them out.
  await writeReplies(local, 'c2', 'm1', 'en', `('x1', 1, 'ok', 'No.', 7, NULL, false, '2026-11-30T06:00:04Z')`);
  await writeReplies(local, 'c1', 'm3', 'en', `('y1', 1, 'ok', 'No.', 11, NULL, false, '2026-11-30T06:00:05Z')`);
  server = await startAthenaServer({ dataDir: dir, database: DATABASE, workgroups: [WORKGROUP] });
  client = new AthenaClient({ endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
});

afterAll(async () => {
  client.destroy();
  await server.close();
  local.close();
  await cleanup();
});

const TYPED = (replies: string) => `
  -- a comment line first, as in the shipped queries
  SELECT model, language, item_id, attempt, status, text, cost_usd, simulated, error_class,
         count(*) OVER (PARTITION BY model) AS n_model,
         CAST(attempt AS DOUBLE) / 3 AS third,
         CAST(NULL AS DOUBLE) AS nothing
  FROM ${replies}
  ORDER BY item_id, attempt`;

describe('AthenaQueryable', () => {
  it('returns the rows the DuckDB Queryable returns for the same query (numbers, booleans, null, text)', async () => {
    // prepare
    const db = queryable();
    const localReplies = parquetSource(path.join(dir, 'campaigns', 'c1', 'generate', 'replies', '**', '*.parquet'));
    // act
    const athenaRows = await db.all(TYPED(sources().replies));
    const duckRows = await local.all(TYPED(`(SELECT * FROM ${localReplies} WHERE model IN ('m1', 'm2'))`));
    // assess
    expect(athenaRows).toEqual(duckRows);
    expect(athenaRows).toHaveLength(4);
    expect(athenaRows[0]).toMatchObject({ item_id: 'i1', attempt: 1, cost_usd: 0.00000012, simulated: true, error_class: null, nothing: null, n_model: 3 });
    expect(athenaRows[3]).toMatchObject({ item_id: 'i3', text: '', cost_usd: 1e9, model: 'm2', language: 'de' });
    // The query went through Athena's calls, in the workgroup and the database.
    const start = server.calls.find((c) => c.operation === 'StartQueryExecution')!;
    expect(start.body).toMatchObject({ WorkGroup: WORKGROUP, QueryExecutionContext: { Database: DATABASE } });
  });

  it('runs a shipped analysis query with the same rows as on DuckDB', async () => {
    const localReplies = parquetSource(path.join(dir, 'campaigns', 'c1', 'generate', 'replies', '**', '*.parquet'));
    const localTables = { prompts: localReplies, replies: `(SELECT * FROM ${localReplies} WHERE model IN ('m1', 'm2'))`, readings: localReplies };
    const athena = await FAR6_SQL.run(queryable(), 'reply_totals', { ...sources(), prompts: sources().replies, readings: sources().replies });
    const duck = await FAR6_SQL.run(local, 'reply_totals', localTables);
    expect(athena).toEqual(duck);
    expect(athena.length).toBeGreaterThan(0);
  });

  it('pages through the results and drops only the header row', async () => {
    server.pageSize = 2;
    try {
      const before = server.calls.length;
      const rows = await queryable().all<{ item_id: string }>(`SELECT item_id FROM ${sources().replies} ORDER BY item_id, attempt`);
      expect(rows.map((r) => r.item_id)).toEqual(['i1', 'i2', 'i2', 'i3']);
      // header + 4 rows at 2 a page: 3 pages.
      expect(server.calls.slice(before).filter((c) => c.operation === 'GetQueryResults')).toHaveLength(3);
    } finally {
      server.pageSize = 1000;
    }
  });

  it('keeps a data row that looks like the header', async () => {
    const rows = await queryable().all(`SELECT 'item_id' AS item_id UNION ALL SELECT 'x' ORDER BY 1`);
    expect(rows).toEqual([{ item_id: 'item_id' }, { item_id: 'x' }]);
  });

  it('polls with a growing wait, capped', async () => {
    const slow = await startAthenaServer({ dataDir: dir, database: DATABASE, pollsBeforeDone: 6 });
    const slowClient = new AthenaClient({ endpoint: slow.url, region: 'us-east-1', credentials: { accessKeyId: 't', secretAccessKey: 't' }, maxAttempts: 1 });
    try {
      const sleeps: number[] = [];
      const rows = await queryable({ client: slowClient, pollInitialMs: 100, pollMaxMs: 300 }, sleeps).all('SELECT 1 AS one');
      expect(rows).toEqual([{ one: 1 }]);
      expect(sleeps).toEqual([100, 150, 225, 300, 300, 300]);
    } finally {
      slowClient.destroy();
      await slow.close();
    }
  });

  it('names the execution, the state, Athena\'s reason and the query when a query FAILED', async () => {
    const err = await queryable()
      .all(`SELECT no_such_column FROM ${sources().replies}`)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AthenaQueryError);
    const e = err as AthenaQueryError;
    expect(e.state).toBe('FAILED');
    expect(e.message).toMatch(/^Athena query q-\d+ FAILED: GENERIC_USER_ERROR: .*no_such_column/s);
    expect(e.message).toContain('(query: SELECT no_such_column FROM');
    expect(server.executions.get(e.queryExecutionId!)?.state).toBe('FAILED');
  });

  it('fails, as Athena does, a read of a table that does not name every injected partition key', async () => {
    const noModel = `SELECT count(*) AS n FROM "${DATABASE}"."replies" WHERE campaign_key = 'c1' AND phase_key = 'generate'`;
    await expect(queryable().all(noModel)).rejects.toThrow(/FAILED: CONSTRAINT_VIOLATION: For the injected projected partition column model/);
    await expect(queryable().all(`SELECT count(*) AS n FROM "${DATABASE}"."replies" r`)).rejects.toThrow(/column campaign_key/);
    // With all three named, the same read runs.
    expect(await queryable().all(`${noModel} AND model = 'm1'`)).toEqual([{ n: 3 }]);
  });

  it('reports a CANCELLED query with its reason, and runSql names the analysis query', async () => {
    server.failNext('CANCELLED', 'Query cancelled by user');
    const err = await FAR6_SQL.run(queryable(), 'label_maps', athenaTableSources(DATABASE, 'c1', ['m1'])).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^analysis query label_maps\.sql failed: Athena query q-\d+ CANCELLED: Query cancelled by user/);
    expect((err as Error).cause).toBeInstanceOf(AthenaQueryError);
  });

  it('stops a query that runs past the timeout', async () => {
    const slow = await startAthenaServer({ dataDir: dir, database: DATABASE, pollsBeforeDone: 5 });
    const slowClient = new AthenaClient({ endpoint: slow.url, region: 'us-east-1', credentials: { accessKeyId: 't', secretAccessKey: 't' }, maxAttempts: 1 });
    try {
      const err = await queryable({ client: slowClient, timeoutMs: 0 }).all('SELECT 1 AS one').catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/^Athena query q-0001 still QUEUED after 0 s; stopped it/);
      expect(slow.calls.map((c) => c.operation)).toEqual(['StartQueryExecution', 'GetQueryExecution', 'StopQueryExecution']);
      expect(slow.executions.get('q-0001')?.state).toBe('CANCELLED');
    } finally {
      slowClient.destroy();
      await slow.close();
    }
  });

  it('asks for result reuse, so a repeated query is answered without a second scan', async () => {
    const sql = `SELECT count(*) AS n FROM ${sources().replies} WHERE status = 'ok'`;
    const ranBefore = server.ranQueries();
    const first = await queryable().all(sql);
    const second = await queryable().all(sql);
    expect(second).toEqual(first);
    expect(first).toEqual([{ n: 3 }]);
    expect(server.ranQueries() - ranBefore).toBe(1);
    const starts = server.calls.filter((c) => c.operation === 'StartQueryExecution' && c.body.QueryString === sql);
    expect(starts.map((c) => c.body.ResultReuseConfiguration)).toEqual([
      { ResultReuseByAgeConfiguration: { Enabled: true, MaxAgeInMinutes: 60 } },
      { ResultReuseByAgeConfiguration: { Enabled: true, MaxAgeInMinutes: 60 } },
    ]);
    // Reuse off: no configuration sent, and the query runs again.
    const ranAgain = server.ranQueries();
    await queryable({ reuseMaxAgeMinutes: 0 }).all(sql);
    expect(server.ranQueries() - ranAgain).toBe(1);
    expect(server.calls.at(-4)?.body.ResultReuseConfiguration).toBeUndefined();
  });

  it('adopts a finished execution: the same query text is answered from it without starting a query', async () => {
    // prepare: the state machine's SQL step ran the first query (its own StartQueryExecution, no reuse)
    const sql = FAR6_SQL.render('label_maps', sources());
    const started = await client.send(new StartQueryExecutionCommand({ QueryString: sql, WorkGroup: WORKGROUP, QueryExecutionContext: { Database: DATABASE } }));
    const id = started.QueryExecutionId!;
    while ((await client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }))).QueryExecution?.Status?.State !== 'SUCCEEDED');
    const db = queryable();
    // act
    expect(await db.adopt(id)).toBe(true);
    const before = server.calls.length;
    const rows = await db.all(sql);
    // assess
    expect(rows).toEqual([]); // no prompts in this data: the query ran on the empty view
    expect(server.calls.slice(before).map((c) => c.operation)).toEqual(['GetQueryResults']);
    expect(db.queryExecutionIds).toEqual([id]);
    // The plan may list the models in the campaign's order: the same query all the same.
    const reordered = FAR6_SQL.render('label_maps', { ...sources(), prompts: sources().prompts.replace("IN ('m1', 'm2')", "IN ('m2', 'm1')") });
    expect(reordered).not.toBe(sql);
    const other = await client.send(new StartQueryExecutionCommand({ QueryString: reordered, WorkGroup: WORKGROUP, QueryExecutionContext: { Database: DATABASE } }));
    while ((await client.send(new GetQueryExecutionCommand({ QueryExecutionId: other.QueryExecutionId! }))).QueryExecution?.Status?.State !== 'SUCCEEDED');
    const db2 = queryable();
    expect(await db2.adopt(other.QueryExecutionId!)).toBe(true);
    await db2.all(sql);
    expect(db2.queryExecutionIds).toEqual([other.QueryExecutionId]);
    // A failed execution is not adopted.
    server.failNext('FAILED', 'HIVE_BAD_DATA: bad');
    const failed = await client.send(new StartQueryExecutionCommand({ QueryString: 'SELECT 2', WorkGroup: WORKGROUP, QueryExecutionContext: { Database: DATABASE } }));
    expect(await db.adopt(failed.QueryExecutionId!)).toBe(false);
  });

  it('refuses a workgroup Athena does not know, with Athena\'s message', async () => {
    await expect(queryable({ workgroup: 'nope' }).all('SELECT 1')).rejects.toThrow('WorkGroup nope is not found.');
  });
});

describe('AthenaQueryable, resumable (the report Lambda)', () => {
  /** A caller with `leftMs` of time, each poll's wait taking what it asks. */
  function resumable(leftMs: number, started: Record<string, string> = {}, tokenSeed = 'sql-step-1') {
    let left = leftMs;
    return queryable({
      sleep: async (ms) => {
        left -= ms;
      },
      resume: { started, remainingMs: () => left, reserveMs: 2_000, tokenSeed },
    });
  }
  const startsOf = (from: number) => server.calls.slice(from).filter((c) => c.operation === 'StartQueryExecution');

  it('stops waiting when the time runs short, and a later instance given what it started polls that execution instead of starting another', async () => {
    // prepare: a query that runs for an hour (of the server's clock), a caller with 5 s left
    const sql = `SELECT count(*) AS n, 'resume-a' AS tag FROM ${sources().replies}`;
    server.holdRunning = () => 3_600_000;
    const first = resumable(5_000);
    const before = server.calls.length;
    // act
    const stopped = await first.all(sql).catch((err: unknown) => err);
    // assess: the signal, not a failure; the execution kept by its key; a token sent
    expect(stopped).toBeInstanceOf(QueryStillRunning);
    const running = stopped as QueryStillRunning;
    expect(running.state).toBe('RUNNING');
    expect(running.message).toMatch(/^Athena query q-\d+ still RUNNING with \d+ s left \(query: SELECT count\(\*\) AS n, 'resume-a' AS tag FROM/);
    expect(first.stillRunning).toBe(running);
    expect(first.started).toEqual({ [queryKey(sql)]: running.queryExecutionId });
    const starts = startsOf(before);
    expect(starts).toHaveLength(1);
    expect(starts[0]!.body.ClientRequestToken).toMatch(/^[0-9a-f]{64}$/);
    // Once stopped, the instance answers nothing more, without a call.
    const calls = server.calls.length;
    await expect(first.all('SELECT 1')).rejects.toBe(running);
    expect(server.calls.length).toBe(calls);
    // act: the query ends; a later instance resumes from what the first started
    server.holdRunning = undefined;
    server.executions.get(running.queryExecutionId)!.heldUntil = undefined;
    const later = resumable(5_000, first.started);
    const rows = await later.all(sql);
    // assess: its rows, from the same execution, nothing started again
    expect(rows).toEqual([{ n: 4, tag: 'resume-a' }]);
    expect(later.queryExecutionIds).toEqual([running.queryExecutionId]);
    expect(startsOf(before)).toHaveLength(1);
    expect(later.stillRunning).toBeUndefined();
  });

  it('gets the same execution back when a start is sent again for the same analysis and query (an answer lost), another for another analysis', async () => {
    // prepare
    const sql = `SELECT count(*) AS n, 'resume-b' AS tag FROM ${sources().replies}`;
    server.holdRunning = () => 3_600_000;
    const executions = server.executions.size;
    // act: two instances that know nothing of each other, then one of another SQL step
    const a = (await resumable(5_000).all(sql).catch((err: unknown) => err)) as QueryStillRunning;
    const b = (await resumable(5_000).all(sql).catch((err: unknown) => err)) as QueryStillRunning;
    const other = (await resumable(5_000, {}, 'sql-step-2').all(sql).catch((err: unknown) => err)) as QueryStillRunning;
    server.holdRunning = undefined;
    // assess
    expect(a).toBeInstanceOf(QueryStillRunning);
    expect(b.queryExecutionId).toBe(a.queryExecutionId);
    expect(other.queryExecutionId).not.toBe(a.queryExecutionId);
    expect(server.executions.size).toBe(executions + 2);
  });

  it('with time to spare waits for the query as the blocking mode does', async () => {
    const sql = `SELECT count(*) AS n, 'resume-c' AS tag FROM ${sources().replies}`;
    const db = resumable(600_000);
    expect(await db.all(sql)).toEqual([{ n: 4, tag: 'resume-c' }]);
    expect(Object.values(db.started)).toEqual(db.queryExecutionIds);
  });
});

describe('athenaSources', () => {
  it("filters each Glue table (the battery's prompts, the shared replies and readings) to the campaign, the phases asked and its models (sorted, once each)", async () => {
    const mine = athenaSources('sondage_db', 'far6', 'far6-demo', ['gamma', 'alpha', 'beta', 'alpha'], new Set(['generate/readings']));
    expect(mine.table('prompts', ['generate'])).toBe(
      `(SELECT * FROM "sondage_db"."far6_prompts" WHERE campaign_key = 'far6-demo' AND phase_key IN ('generate') AND model IN ('alpha', 'beta', 'gamma'))`,
    );
    expect(mine.table('readings', ['generate', 'audit-retest'])).toBe(
      `(SELECT * FROM "sondage_db"."readings" WHERE campaign_key = 'far6-demo' AND phase_key IN ('generate', 'audit-retest') AND model IN ('alpha', 'beta', 'gamma'))`,
    );
    expect(await mine.has('readings', 'generate')).toBe(true);
    expect(await mine.has('readings', 'audit-retest')).toBe(false);
    expect(() => athenaSources('db', 'far6', 'c', [])).toThrow('campaign c: no models to query');
  });
});

describe('athenaValue', () => {
  it('converts Athena\'s text by column type', () => {
    expect(athenaValue('bigint', '12')).toBe(12);
    expect(athenaValue('double', '1.0E-7')).toBe(1e-7);
    expect(athenaValue('double', 'NaN')).toBeNaN();
    expect(athenaValue('double', 'Infinity')).toBe(Infinity);
    expect(athenaValue('decimal(10,3)', '0.500')).toBe(0.5);
    expect(athenaValue('boolean', 'false')).toBe(false);
    expect(athenaValue('varchar', '007')).toBe('007');
    expect(athenaValue('varchar', undefined)).toBeNull();
    expect(athenaValue('date', '2026-11-30')).toBe('2026-11-30');
    expect(() => athenaValue('boolean', 'yes')).toThrow('Athena returned "yes" for a boolean column; expected true or false');
    expect(() => athenaValue('integer', 'x')).toThrow('expected a number');
  });
});

describe('storedParts', () => {
  it("lists the models with parts in the phases asked, sorted, and the tables they hold, ignoring other files", async () => {
    const store = new LocalBlobStore(dir);
    await store.put('campaigns/c1/results/summary.md', '# x');
    const stored = await storedParts(store, 'c1', ['generate']);
    expect(stored.models).toEqual(['m1', 'm2', 'm3']);
    expect(stored.tables.has('generate/replies')).toBe(true);
    expect((await storedParts(store, 'none', ['generate'])).models).toEqual([]);
  });
});
