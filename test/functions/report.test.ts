import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AthenaClient, GetQueryExecutionCommand, StartQueryExecutionCommand } from '@aws-sdk/client-athena';
// eslint-disable-next-line no-restricted-imports -- the handler's own Context type; lib/ still may not import it
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalysisQueriesStillRunning, createHandler, REPORT_ATHENA } from '../../functions/report/handler.js';
import type { ReportAgain, ReportEvent, ReportOutput } from '../../lib/config/pipeline.js';
import { REPORT_ROUNDS } from '../../lib/config/sizing.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { athenaSources } from '../../lib/analysis/athena.js';
import { far6 } from '../../lib/batteries/far6/index.js';
import { AthenaQueryable } from '../../lib/store/AthenaQueryable.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import { startAthenaServer } from '../helpers/athenaServer.js';
import type { AthenaServer } from '../helpers/athenaServer.js';
import { loadContext, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { filesUnder, readResult } from '../helpers/runData.js';
import { startS3Server } from '../store/s3Server.js';
import type { S3Server } from '../store/s3Server.js';
import { asRemote } from '../helpers/localSource.js';
import { collectingPowertools } from '../helpers/powertools.js';

// The report handler invoked with the payload the definition produces
// for it, against S3 and Athena servers on 127.0.0.1, and its results compared with the local run's.

const CAMPAIGN = 'run-small';
const DATABASE = 'sondage_test';
const WORKGROUP = 'sondage-test';
const BUCKET = 'data';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

let dir: string;
let dataDir: string;
let cleanup: () => Promise<void>;
let s3: S3Server;
let athena: AthenaServer;
let athenaClient: AthenaClient;
let store: S3BlobStore;
let campaignText: string;
/** The fake clock of the Athena server and of the handler's polls and deadline: it moves only when a test moves it. */
let clockMs = Date.parse('2030-01-01T00:00:00Z');

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('report'));
  const file = await writeCampaign(dir, 'small.yaml', (doc) => {
    doc.design['forms'] = ['plain', 'negint'];
  });
  dataDir = path.join(dir, 'data');
  const summary = await runCampaign(await loadContext(file), { dataDir });
  expect(summary.stopped).toBeUndefined();
  // The bucket holds what the workers would have written: the same keys as the local data folder.
  s3 = await startS3Server();
  store = new S3BlobStore({ bucket: BUCKET, clientConfig: { endpoint: s3.url, region: 'us-east-1', credentials, forcePathStyle: true, maxAttempts: 1 } });
  for (const f of await filesUnder(path.join(dataDir, 'campaigns', CAMPAIGN), (n) => n.endsWith('.parquet'))) {
    await store.put(path.relative(dataDir, f).split(path.sep).join('/'), await readFile(f));
  }
  // The campaign as `sondage start --aws` uploads it: the report reads its battery from it.
  campaignText = await readFile(file, 'utf8');
  await store.put(`campaigns/${CAMPAIGN}/input/campaign.yaml`, campaignText);
  athena = await startAthenaServer({ dataDir, database: DATABASE, workgroups: [WORKGROUP], now: () => clockMs });
  athenaClient = new AthenaClient({ endpoint: athena.url, region: 'us-east-1', credentials, maxAttempts: 1 });
}, 60_000);

afterAll(async () => {
  athenaClient?.destroy();
  await athena?.close();
  await s3?.close();
  await cleanup();
});

/** A Lambda context whose deadline is `remainingMs` from now on the fake clock. */
function contextWith(remainingMs = 600_000): Context {
  const deadline = clockMs + remainingMs;
  return {
    functionName: 'report',
    awsRequestId: 'req-1',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:report',
    getRemainingTimeInMillis: () => Math.max(0, deadline - clockMs),
  } as Context;
}

/** The first round's payload as infra/constructs/Pipeline.ts sends it. */
const firstRound = { maxRounds: REPORT_ROUNDS.maxRounds, progress: { round: 0, queries: {} } };

/** The ledger's overrun records by campaign (DynamoLedger.overrunOf reads the budget item). */
const overruns = new Map<string, { model: string; excessUsd: number }>();

/** Each poll's wait takes `pollMs` of the fake clock (default: none). */
function handlerFor(pollMs = 0) {
  const { logger, metrics, logs } = collectingPowertools({ logLevel: 'INFO' });
  const handler = createHandler({
    athena: (resume) =>
      new AthenaQueryable({
        workgroup: WORKGROUP,
        database: DATABASE,
        client: athenaClient,
        sleep: async () => {
          clockMs += pollMs;
        },
        resume,
        ...REPORT_ATHENA,
      }),
    store,
    bucket: BUCKET,
    ledger: { overrunOf: async (campaign) => overruns.get(campaign) },
    tmpDir: dir,
    logger,
    metrics,
  });
  return { handler, logs };
}

function isDone(out: ReportOutput | ReportAgain): out is ReportOutput {
  return !('again' in out);
}

/** Every result file is byte-for-byte the local analysis's over the same Parquet, but for the source it names. */
async function expectLocalFiles(out: ReportOutput): Promise<string[]> {
  const names = out.files.map((k) => k.slice(out.resultsPrefix.length));
  const source = `s3://${BUCKET}/campaigns/${CAMPAIGN}/`;
  for (const name of names) {
    const local = await readResult(dataDir, CAMPAIGN, name);
    const remote = await text(`${out.resultsPrefix}${name}`);
    expect(remote.length, name).toBeGreaterThan(0);
    expect(remote === asRemote(local, CAMPAIGN, source), `${name} differs from the local run's`).toBe(true);
  }
  return names;
}

/** What the state machine's SQL step does: StartQueryExecution of the plan's query, waited on (.sync). */
async function sqlStep(queryString: string): Promise<string> {
  const started = await athenaClient.send(new StartQueryExecutionCommand({ QueryString: queryString, WorkGroup: WORKGROUP, QueryExecutionContext: { Database: DATABASE } }));
  const id = started.QueryExecutionId!;
  for (;;) {
    const state = (await athenaClient.send(new GetQueryExecutionCommand({ QueryExecutionId: id }))).QueryExecution?.Status?.State;
    if (state === 'SUCCEEDED') return id;
    if (state !== 'QUEUED' && state !== 'RUNNING') throw new Error(`SQL step ended ${state}`);
  }
}

const text = async (key: string): Promise<string> => Buffer.from((await store.get(key)) ?? new Uint8Array()).toString('utf8');

describe('report handler', () => {
  it('writes the local run\'s result files to S3 from the SQL stage on Athena, reusing the SQL step\'s query', async () => {
    // prepare: the SQL step has run the plan's first query; the event is what Pipeline.ts passes
    const firstQuery = far6.analysis.firstQuery(athenaSources(DATABASE, 'far6', CAMPAIGN, ['alpha', 'beta'], undefined, ['en', 'de']));
    const queryExecutionId = await sqlStep(firstQuery);
    const event: ReportEvent = { campaign: CAMPAIGN, queryExecutionId, ...firstRound };
    const { handler, logs } = handlerFor();
    const ranBefore = athena.ranQueries();
    const callsBefore = athena.calls.length;
    // act
    const out = await handler(event, contextWith());
    // assess: the output contract and the files, in one round
    if (!isDone(out)) throw new Error(`expected the report written, got ${JSON.stringify(out)}`);
    expect(out.resultsPrefix).toBe(`campaigns/${CAMPAIGN}/results/`);
    expect(out.files.length).toBeGreaterThanOrEqual(7);
    expect(out.files.every((k) => k.startsWith(out.resultsPrefix))).toBe(true);
    const names = await expectLocalFiles(out);
    expect(names).toEqual(expect.arrayContaining(['story_scores.csv', 'cell_habits.csv', 'readout_convergence.csv', 'reply_totals.csv', 'summary.md']));
    // Key numbers, checked beyond equality: story scores exist for both models and languages.
    const scores = await text(`${out.resultsPrefix}story_scores.csv`);
    for (const cell of ['alpha,en', 'alpha,de', 'beta,en', 'beta,de']) expect(scores).toContain(`\n${cell},`);
    expect(await text(`${out.resultsPrefix}summary.md`)).toContain(`- Source: \`s3://${BUCKET}/campaigns/${CAMPAIGN}/\``);
    // The SQL step's query was read, not started again; every other query ran once, without result reuse.
    const starts = athena.calls.slice(callsBefore).filter((c) => c.operation === 'StartQueryExecution');
    expect(starts.some((c) => c.body.QueryString === firstQuery)).toBe(false);
    expect(starts.length).toBeGreaterThan(0);
    expect(starts.every((c) => c.body.ResultReuseConfiguration === undefined)).toBe(true);
    expect(athena.ranQueries() - ranBefore).toBe(starts.length);
    expect(logs.some((l) => l.includes('"report written"') && l.includes('"adoptedSqlStep":true'))).toBe(true);
    expect(logs.some((l) => l.includes('"ReportFiles"'))).toBe(true);
  });

  it('answers again when its time runs short while a query runs, and resumes from its answer: each query started once, the same files', async () => {
    // prepare: two hours on, so no earlier run's result is reused; every query the handler starts
    // runs 700 s of the fake clock, longer than the Lambda's 600 s; each poll takes 10 s
    clockMs += 2 * 3600_000;
    const queryExecutionId = await sqlStep(far6.analysis.firstQuery(athenaSources(DATABASE, 'far6', CAMPAIGN, ['alpha', 'beta'], undefined, ['en', 'de'])));
    for (const key of await store.list(`campaigns/${CAMPAIGN}/results/`)) await store.delete(key);
    athena.holdRunning = () => 700_000;
    const { handler, logs } = handlerFor(10_000);
    const callsBefore = athena.calls.length;
    const answers: (ReportOutput | ReportAgain)[] = [];
    let progress: ReportEvent['progress'] = firstRound.progress;
    // act: what the state machine does — invoke, and while it answers again, wait and invoke with the answer
    try {
      for (let round = 0; round < 20; round++) {
        const out = await handler({ campaign: CAMPAIGN, queryExecutionId, maxRounds: REPORT_ROUNDS.maxRounds, progress }, contextWith(600_000));
        answers.push(out);
        if (isDone(out)) break;
        clockMs += out.waitSeconds * 1000;
        progress = out;
      }
    } finally {
      athena.holdRunning = undefined;
    }
    // assess: several rounds, each answer counting them and carrying what was started
    const last = answers.at(-1)!;
    if (!isDone(last)) throw new Error(`still running after ${answers.length} rounds: ${JSON.stringify(last)}`);
    const again = answers.slice(0, -1) as ReportAgain[];
    expect(again.length).toBeGreaterThanOrEqual(2);
    expect(again.map((a) => a.round)).toEqual(again.map((_a, i) => i + 1));
    expect(again.every((a) => a.again && a.waitSeconds === REPORT_ROUNDS.waitSeconds && /\.sql$|^stored_spend$/.test(a.running.query) && a.running.state === 'RUNNING')).toBe(true);
    expect(again[0]!.running.query).toBe('same_replies_shares.sql');
    // No poll went past the reserve: each round stopped with at least 120 s of its 600 s left.
    const stops = logs.filter((l) => l.includes('"analysis queries still running"')).map((l) => (JSON.parse(l) as { remainingMs: number }).remainingMs);
    expect(stops).toHaveLength(again.length);
    expect(stops.every((ms) => ms >= REPORT_ROUNDS.reserveMs && ms < 600_000)).toBe(true);
    // Each query the handler ran was started once, and the started ones are the executions it read.
    const starts = athena.calls.slice(callsBefore).filter((c) => c.operation === 'StartQueryExecution').map((c) => c.body.QueryString as string);
    expect(new Set(starts).size).toBe(starts.length);
    const written = logs.find((l) => l.includes('"report written"'))!;
    const read = (JSON.parse(written) as { queryExecutionIds: string[] }).queryExecutionIds;
    expect(read.filter((id) => id !== queryExecutionId).sort()).toEqual(
      athena.calls
        .slice(callsBefore)
        .filter((c) => c.operation === 'StartQueryExecution')
        .map((c) => [...athena.executions.values()].find((e) => e.token === c.body.ClientRequestToken)!.id)
        .sort(),
    );
    expect(written).toContain(`"round":${answers.length}`);
    // The files are the local run's, as in one uninterrupted round.
    expect(await expectLocalFiles(last)).toEqual(expect.arrayContaining(['story_scores.csv', 'summary.md']));
  });

  it('says in summary.md and report.html how far spend went past the cap and which model did it, from the ledger\'s overrun record', async () => {
    // prepare: a provider reported more usage than its calls reserved; the worker recorded it on the budget item
    const queryExecutionId = await sqlStep(far6.analysis.firstQuery(athenaSources(DATABASE, 'far6', CAMPAIGN, ['alpha', 'beta'], undefined, ['en', 'de'])));
    overruns.set(CAMPAIGN, { model: 'openai/gpt-x', excessUsd: 0.25 });
    try {
      // act
      const out = await handlerFor().handler({ campaign: CAMPAIGN, queryExecutionId, ...firstRound }, contextWith());
      // assess: the warning sits under the spend line; the rest of the file is the local run's
      if (!isDone(out)) throw new Error(`expected the report written, got ${JSON.stringify(out)}`);
      const warning = /(PAST THE CAP by \$[\d.]+|OVERRUN): openai\/gpt-x reported usage \$0\.25 past what its calls reserved/;
      const summary = await text(`${out.resultsPrefix}summary.md`);
      expect(summary).toMatch(new RegExp(`\\nSpend: \\$[\\d.]+ of the \\$\\d+ cap \\([\\d.]+ %\\)\\n\\n> \\*\\*${warning.source}`));
      expect(await text(`${out.resultsPrefix}report.html`)).toMatch(new RegExp(`<p class="notice" role="note"><strong>${warning.source}`));
    } finally {
      overruns.clear();
    }
  });

  it('stops the query still running and fails naming it at the last round, writing nothing', async () => {
    // prepare: a query that never ends; the round before the last
    clockMs += 2 * 3600_000;
    const queryExecutionId = await sqlStep(far6.analysis.firstQuery(athenaSources(DATABASE, 'far6', CAMPAIGN, ['alpha', 'beta'], undefined, ['en', 'de'])));
    for (const key of await store.list(`campaigns/${CAMPAIGN}/results/`)) await store.delete(key);
    athena.holdRunning = () => Number.POSITIVE_INFINITY;
    const { handler } = handlerFor(10_000);
    // act
    const failure = await handler({ campaign: CAMPAIGN, queryExecutionId, maxRounds: 3, progress: { round: 2, queries: {} } }, contextWith(600_000)).catch((err: unknown) => err as Error);
    athena.holdRunning = undefined;
    // assess: the error names the query and its execution, which was stopped
    expect(failure).toBeInstanceOf(AnalysisQueriesStillRunning);
    const m = /^campaign run-small: analysis query same_replies_shares\.sql \(Athena (q-\d+)\) still RUNNING after 3 rounds of the report \(the limit, REPORT_ROUNDS\.maxRounds in lib\/config\/sizing\.ts\); stopped it\./.exec((failure as Error).message);
    expect(m, (failure as Error).message).not.toBeNull();
    expect(athena.executions.get(m![1]!)!.state).toBe('CANCELLED');
    expect(await store.list(`campaigns/${CAMPAIGN}/results/`)).toEqual([]);
  });

  it('refuses an event without the SQL step\'s execution, naming the field', async () => {
    const { handler } = handlerFor();
    await expect(handler({ campaign: CAMPAIGN, ...firstRound }, contextWith())).rejects.toThrow(/report event: queryExecutionId: expected the SQL step's/);
    await expect(handler({ campaign: '../x', queryExecutionId: 'q', ...firstRound }, contextWith())).rejects.toThrow(/campaign: expected a campaign id/);
    // The state machine's round fields: both required, so an old definition that does not loop is refused.
    await expect(handler({ campaign: CAMPAIGN, queryExecutionId: 'q' }, contextWith())).rejects.toThrow(/maxRounds: expected a whole number ≥ 1.*; progress: expected \{ round, queries \}/);
    await expect(handler({ campaign: CAMPAIGN, queryExecutionId: 'q', maxRounds: 2, progress: { round: 0, queries: { k: 7 } } }, contextWith())).rejects.toThrow(/progress: expected/);
  });

  it('fails with the analysis query and Athena\'s reason when a query fails, writing nothing', async () => {
    const queryExecutionId = await sqlStep(far6.analysis.firstQuery(athenaSources(DATABASE, 'far6', CAMPAIGN, ['alpha', 'beta'], undefined, ['en', 'de'])));
    for (const key of await store.list(`campaigns/${CAMPAIGN}/results/`)) await store.delete(key);
    // The next query the handler starts (the first after the adopted one) fails in Athena.
    athena.failNext('FAILED', 'HIVE_CURSOR_ERROR: Failed to read Parquet file');
    const { handler } = handlerFor();
    await expect(handler({ campaign: CAMPAIGN, queryExecutionId, ...firstRound }, contextWith())).rejects.toThrow(
      /^analysis query same_replies_shares\.sql failed: Athena query q-\d+ FAILED: HIVE_CURSOR_ERROR: Failed to read Parquet file/,
    );
    expect(await store.list(`campaigns/${CAMPAIGN}/results/`)).toEqual([]);
  });

  it('says so when the campaign has no stored parts, or was never uploaded', async () => {
    const { handler } = handlerFor();
    await store.put('campaigns/nothing-here/input/campaign.yaml', campaignText.replace(`name: ${CAMPAIGN}`, 'name: nothing-here'));
    await expect(handler({ campaign: 'nothing-here', queryExecutionId: 'q-0001', ...firstRound }, contextWith())).rejects.toThrow(
      'campaign nothing-here: no stored parts of its models under campaigns/nothing-here/generate/replies/; nothing to analyse',
    );
    await expect(handler({ campaign: 'never-uploaded', queryExecutionId: 'q-0001', ...firstRound }, contextWith())).rejects.toThrow(/no campaigns\/never-uploaded\/input\/campaign\.yaml in the bucket/);
  });
});
