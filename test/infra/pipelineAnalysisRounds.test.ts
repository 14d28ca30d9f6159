/**
 * Every Athena query of the analysis waited for by the state machine, none inside
 * a Lambda past its timeout. The synthesized definition run with the real handlers (as in
 * pipelineRun.test.ts) on a fake clock, the Athena stand-in holding each query the report starts
 * RUNNING for longer than the report's 600 s: the report answers `again` before its deadline, the
 * state machine waits and invokes it again with that answer, and the analysis resumes where it
 * was — each query started once, the local run's files in the end. A query that never ends fails
 * the execution at the round limit, naming it, with the failure recorded in the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportAgain, ReportEvent } from '../../lib/config/pipeline.js';
import { REPORT_ROUNDS } from '../../lib/config/sizing.js';
import { readResults } from '../helpers/runData.js';
import type { ExecutionRecord } from '../helpers/asl/interpreter.js';
import { oneStoryFar6 } from '../helpers/pipeline/campaignFiles.js';
import { localFar6Run, type LocalFar6Run } from '../helpers/pipeline/localFar6Run.js';
import { startPipeline } from '../helpers/pipeline/pipelineHarness.js';
import type { Pipeline } from '../helpers/pipeline/pipelineHarness.js';
import { asRemote } from '../helpers/localSource.js';
import { useServer } from '../helpers/useServer.js';

const CAMPAIGN = 'pipe-rounds';

let cleanup: () => Promise<void>;
let file: string;
let dataDir: string;
let localResults: Map<string, string>;

beforeAll(async () => {
  let ctx: LocalFar6Run['ctx'];
  ({ cleanup, file, ctx } = await localFar6Run('pipeline-rounds', CAMPAIGN, oneStoryFar6));
  dataDir = ctx.dataDir;
  localResults = await readResults(dataDir, CAMPAIGN);
}, 60_000);

const pipelines = useServer('pipeline', startPipeline);
afterAll(() => cleanup());

/**
 * A deployment on a fake clock (each Athena poll of the report takes 10 s of it) whose Athena holds
 * every query the report starts RUNNING for `holdMs` (the SQL step's query runs as usual).
 */
async function deploy(holdMs: number): Promise<Pipeline> {
  const pipeline = await pipelines.start();
  await pipeline.upload(file);
  pipeline.useFakeClock(10_000);
  pipeline.fleet.onInvoke = (fn, previous) => {
    if (fn === 'report' && previous === 0) pipeline.standIns.athena.holdRunning = () => holdMs;
  };
  return pipeline;
}

/** The top-level states the execution went through, in order. */
const statesOf = (run: ExecutionRecord): string[] => run.history.filter((e) => e.type === 'StateEntered' && !e.path.includes('/')).map((e) => e.state);

/** The StartQueryExecution calls made by the report (after the SQL step's), by query text. */
function reportStarts(pipeline: Pipeline, sqlStepId: string): string[] {
  const sqlStepQuery = pipeline.standIns.athena.executions.get(sqlStepId)!.query;
  const starts = pipeline.standIns.athena.calls.filter((c) => c.operation === 'StartQueryExecution').map((c) => c.body.QueryString as string);
  return starts.slice(starts.indexOf(sqlStepQuery) + 1);
}

describe('the report step waits on Athena through the state machine', () => {
  it('survives queries slower than its deadline: it answers again, the loop resumes it, each query started once, the local run\'s files', async () => {
    // prepare: each report query runs 700 s, the report Lambda has 600 s
    const pipeline = await deploy(700_000);
    // act: the input `sondage start --aws` sends
    const run = await pipeline.execute({ campaign: CAMPAIGN });
    // assess: succeeded through several rounds of Report → Wait → Report
    expect(run.result.status, JSON.stringify(run.result).slice(0, 2000)).toBe('SUCCEEDED');
    const reports = pipeline.fleet.of('report');
    expect(reports.every((i) => i.outcome === 'ok')).toBe(true);
    expect(reports.length).toBeGreaterThanOrEqual(3);
    const states = statesOf(run);
    const tail = states.slice(states.indexOf('SqlStep'));
    const loop = ['Report', 'Analysis queries still running?', 'Wait for the analysis queries'];
    expect(tail).toEqual(['SqlStep', 'Report: no round yet', ...Array.from({ length: reports.length - 1 }, () => loop).flat(), 'Report', 'Analysis queries still running?', 'Done']);
    // Each query the report needed was started once, across the rounds, none of them the SQL step's.
    const sqlStepId = (reports[0]!.payload as unknown as ReportEvent).queryExecutionId;
    const starts = reportStarts(pipeline, sqlStepId);
    expect(starts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(starts).size).toBe(starts.length);
    expect(pipeline.standIns.athena.ranQueries()).toBe(starts.length + 1);
    // The files are the local run's, byte for byte but for the source they name.
    const results = await pipeline.results(CAMPAIGN);
    const source = `s3://${pipeline.standIns.names.bucket}/campaigns/${CAMPAIGN}/`;
    expect([...results.keys()].sort()).toEqual([...localResults.keys()].sort());
    for (const [name, text] of results) expect(text === asRemote(localResults.get(name)!, CAMPAIGN, source), `${name} differs from the local run's`).toBe(true);
  });

  it('reads each query\'s rows once, from its result file, never paging Athena nor reading a finished query again in a later round', async () => {
    // prepare: queries slower than the report's deadline, and result pages of 2 rows (as 10 M rows are 10,000 pages of 1,000)
    const pipeline = await deploy(700_000);
    pipeline.standIns.athena.pageSize = 2;
    // Where each report round's Athena calls begin.
    const roundStarts: number[] = [];
    const onInvoke = pipeline.fleet.onInvoke;
    pipeline.fleet.onInvoke = (fn, previous) => {
      onInvoke?.(fn, previous);
      if (fn === 'report') roundStarts.push(pipeline.standIns.athena.calls.length);
    };
    // act
    const run = await pipeline.execute({ campaign: CAMPAIGN });
    // assess: the local run's files, through several rounds
    expect(run.result.status, JSON.stringify(run.result).slice(0, 2000)).toBe('SUCCEEDED');
    const reports = pipeline.fleet.of('report');
    expect(reports.length).toBeGreaterThanOrEqual(3);
    const results = await pipeline.results(CAMPAIGN);
    const source = `s3://${pipeline.standIns.names.bucket}/campaigns/${CAMPAIGN}/`;
    for (const [name, text] of results) expect(text === asRemote(localResults.get(name)!, CAMPAIGN, source), `${name} differs from the local run's`).toBe(true);
    // One GetQueryResults of one row per query read (its columns), across all rounds; the rows came from its file.
    const athena = pipeline.standIns.athena;
    const resultsCalls = athena.calls.filter((c) => c.operation === 'GetQueryResults');
    const perQuery = new Map<string, number>();
    for (const c of resultsCalls) perQuery.set(c.body.QueryExecutionId as string, (perQuery.get(c.body.QueryExecutionId as string) ?? 0) + 1);
    expect(perQuery.size).toBeGreaterThanOrEqual(2);
    expect([...perQuery.values()].every((n) => n === 1)).toBe(true);
    expect(resultsCalls.every((c) => c.body.MaxResults === 1 && c.body.NextToken === undefined)).toBe(true);
    const rowsRead = [...perQuery.keys()].reduce((sum, id) => sum + (athena.executions.get(id)!.rows ?? []).length, 0);
    expect(rowsRead).toBeGreaterThan(2 * perQuery.size);
    // A query finished in one round is carried as such: the next rounds do not poll it.
    const again = reports.slice(0, -1).map((r) => r.output as unknown as ReportAgain);
    const finishedIds = new Set(again.flatMap((a) => Object.values(a.finished ?? {}).map((q) => q.id)));
    expect(finishedIds.size).toBeGreaterThanOrEqual(1);
    for (const a of again) for (const q of Object.values(a.finished ?? {})) expect(pipeline.standIns.s3.objects.has(q.output.slice('s3://'.length))).toBe(true);
    expect(roundStarts).toHaveLength(reports.length);
    for (let i = 1; i < reports.length; i++) {
      const carried = Object.values((reports[i]!.payload as unknown as ReportEvent).progress.finished ?? {}).map((q) => q.id);
      const calls = athena.calls.slice(roundStarts[i], roundStarts[i + 1] ?? athena.calls.length);
      for (const id of carried) expect(calls.filter((c) => c.body.QueryExecutionId === id), `round ${i + 1} asked Athena about ${id}, finished before`).toEqual([]);
    }
  });

  it('sends the report exactly the payloads it parses: the first round from no progress, each next round the previous answer', async () => {
    // prepare
    const pipeline = await deploy(700_000);
    // act
    const run = await pipeline.execute({ campaign: CAMPAIGN });
    // assess
    expect(run.result.status).toBe('SUCCEEDED');
    const reports = pipeline.fleet.of('report');
    expect(reports.length).toBeGreaterThanOrEqual(2);
    // The SQL step's execution: the first Athena saw (nothing before it queries Athena).
    const sqlStepId = [...pipeline.standIns.athena.executions.keys()][0]!;
    expect(pipeline.standIns.athena.executions.get(sqlStepId)?.state).toBe('SUCCEEDED');
    expect(reports[0]!.payload).toEqual({ campaign: CAMPAIGN, queryExecutionId: sqlStepId, maxRounds: REPORT_ROUNDS.maxRounds, progress: { round: 0, queries: {} } });
    for (let i = 1; i < reports.length; i++) {
      const previous = reports[i - 1]!.output as unknown as ReportAgain;
      expect(previous).toMatchObject({ again: true, waitSeconds: REPORT_ROUNDS.waitSeconds, round: i });
      expect(reports[i]!.payload).toEqual({ campaign: CAMPAIGN, queryExecutionId: sqlStepId, maxRounds: REPORT_ROUNDS.maxRounds, progress: previous });
    }
    // The last answer is the report's output, at $.report of the execution's output.
    expect(reports.at(-1)!.output).toEqual({ resultsPrefix: `campaigns/${CAMPAIGN}/results/`, files: expect.arrayContaining([`campaigns/${CAMPAIGN}/results/summary.md`]) });
    expect(run.result).toMatchObject({ output: { report: reports.at(-1)!.output } });
  });

  it(`fails the execution at the round limit (${REPORT_ROUNDS.maxRounds}) naming the query still running, stops it, and records the failure`, async () => {
    // prepare: a query the report starts never ends
    const pipeline = await deploy(Number.POSITIVE_INFINITY);
    // act
    const run = await pipeline.execute({ campaign: CAMPAIGN });
    // assess: the execution failed through the record-failure step
    expect(run.result).toMatchObject({ status: 'FAILED', error: 'SondageFailed' });
    const reports = pipeline.fleet.of('report');
    expect(reports).toHaveLength(REPORT_ROUNDS.maxRounds);
    expect(reports.slice(0, -1).every((i) => i.outcome === 'ok')).toBe(true);
    expect(reports.at(-1)!.outcome).toBe('error');
    expect(statesOf(run).slice(-3)).toEqual(['Report', 'Record failure', 'Failed']);
    const failures = await pipeline.ledger.failures(CAMPAIGN);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.execution).toBe(run.arn);
    expect(failures[0]!.error).toBe('AnalysisQueriesStillRunning');
    const m = new RegExp(`analysis query same_replies_shares\\.sql \\(Athena (q-\\d+)\\) still RUNNING after ${REPORT_ROUNDS.maxRounds} rounds of the report .*; stopped it\\.`).exec(failures[0]!.cause);
    expect(m, failures[0]!.cause).not.toBeNull();
    expect(pipeline.standIns.athena.executions.get(m![1]!)!.state).toBe('CANCELLED');
    // Started once, polled every round; nothing written.
    const sqlStepId = (reports[0]!.payload as unknown as ReportEvent).queryExecutionId;
    expect(reportStarts(pipeline, sqlStepId)).toHaveLength(1);
    expect(await pipeline.results(CAMPAIGN)).toEqual(new Map());
  });
});
