/**
 * The state machine's "Report" state, the Lambda after the SQL stage's Athena queries that writes
 * the statistics and the report to S3: the campaign's battery's analysis with
 * its SQL stage on Athena (lib/analysis/athena.ts), written as the local run writes it, under
 * `campaigns/<campaign>/results/` in the data bucket.
 *
 * No invocation waits on Athena past its deadline: it polls a query only while
 * more than REPORT_ROUNDS.reserveMs of its time is left, then answers ReportAgain — the queries it
 * started, by key, and the one still running — and the state machine waits and invokes it again
 * with that answer as `progress`. Each round replays the analysis from its first query, polling,
 * never starting, the ones already started; so the statistics see what one uninterrupted run sees.
 * A query's rows are read from its result file in the bucket (one GetObject, not GetQueryResults
 * pages of 1,000 rows), and a query seen to succeed is carried to the next round as `finished`
 * (its file and columns): no Athena call for it again, its rows from the container's cache or,
 * in a fresh container, its file. At `maxRounds` a query still running is stopped
 * and the invocation fails naming it (AnalysisQueriesStillRunning), which the state machine records.
 *
 * Payload, from infra/constructs/Pipeline.ts: ReportEvent `{ campaign, queryExecutionId, maxRounds,
 * progress }`, where the execution is the SQL step's; its results answer the analysis's first query
 * instead of a re-run.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { resumeAnalysisOnAthena } from '../../lib/analysis/athena.js';
import { simulationTruthFile } from '../../lib/analysis/simulationTruth.js';
import { awsReportSpend } from '../../lib/analysis/storedSpend.js';
import { ENV } from '../../lib/config/index.js';
import type { ReportAgain, ReportEvent, ReportOutput } from '../../lib/config/pipeline.js';
import { REPORT_ROUNDS } from '../../lib/config/sizing.js';
import { SondageError } from '../../lib/errors.js';
import { campaignEntries } from '../../lib/design/campaign.js';
import { campaignCache } from '../../lib/run/campaignInput.js';
import { AthenaQueryable } from '../../lib/store/AthenaQueryable.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import type { FinishedQuery, Value } from '../../lib/store/AthenaQueryable.js';
import type { AthenaQueryableOptions, AthenaResume } from '../../lib/store/AthenaQueryable.js';
import { campaignPrefix, isSafeSegment, resultsKey } from '../../lib/store/layout.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import type { BlobStore } from '../../lib/store/types.js';
import { builtOnFirstCall } from '../shared/builtOnFirstCall.js';
import { powertools } from '../shared/powertools.js';
import { requiredEnv } from '../shared/requiredEnv.js';


/**
 * How the report's queries run on Athena: without result reuse, since an execution analyses the
 * replies it has just written (a --retry-failed rerun within the reuse window would otherwise be
 * answered from the previous run's results, without its items). The state machine's SQL step asks
 * for none either (infra/constructs/Pipeline.ts); the report adopts that step's query by id.
 */
export const REPORT_ATHENA = { reuseMaxAgeMinutes: 0 } as const;
export interface ReportDeps {
  /**
   * A fresh resumable Queryable per invocation (it remembers the executions it adopted and ran),
   * reading result files with `readResultFile` and keeping their rows in `resultCache`.
   */
  readonly athena: (resume: AthenaResume, files: Pick<AthenaQueryableOptions, 'readResultFile' | 'resultCache'>) => AthenaQueryable;
  /** Time kept after the last poll (default REPORT_ROUNDS.reserveMs). */
  readonly reserveMs?: number;
  /** The data bucket: the campaign's Parquet is listed from it, the results are written to it. */
  readonly store: BlobStore;
  /** Bucket name, for the `Source` line of summary.md. */
  readonly bucket: string;
  /**
   * The ledger's record of a provider that reported more usage than its calls reserved (one
   * GetItem on the budget item), for the spend line of summary.md and report.html.
   */
  readonly ledger: { overrunOf(campaign: string): Promise<{ readonly model: string; readonly excessUsd: number } | undefined> };
  /** Local scratch folder (Lambda: /tmp): the uploaded campaign is copied under it. */
  readonly tmpDir: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** The analysis ran out of rounds with a query still running (stopped); the execution fails with this. */
export class AnalysisQueriesStillRunning extends SondageError {
  constructor(message: string) {
    super(message);
    this.name = 'AnalysisQueriesStillRunning';
  }
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;

function parseEvent(event: unknown): ReportEvent {
  const e = event as Partial<ReportEvent> | null;
  const problems: string[] = [];
  if (typeof e?.campaign !== 'string' || !isSafeSegment(e.campaign)) problems.push('campaign: expected a campaign id (letters, digits, ., _, -)');
  if (typeof e?.queryExecutionId !== 'string' || e.queryExecutionId === '') {
    problems.push('queryExecutionId: expected the SQL step\'s $.sql.QueryExecution.QueryExecutionId');
  }
  if (!isCount(e?.maxRounds) || e.maxRounds < 1) problems.push('maxRounds: expected a whole number ≥ 1 (the definition\'s REPORT_ROUNDS.maxRounds)');
  const progress = e?.progress as Partial<ReportEvent['progress']> | undefined;
  const queries = progress?.queries as Record<string, unknown> | undefined;
  if (
    typeof progress !== 'object' || progress === null || !isCount(progress.round) ||
    typeof queries !== 'object' || queries === null || Array.isArray(queries) || !Object.values(queries).every((id) => typeof id === 'string' && id !== '')
  ) {
    problems.push('progress: expected { round, queries } ({ round: 0, queries: {} } at first, then the previous answer)');
  }
  const finished = progress?.finished as Record<string, Partial<FinishedQuery>> | undefined;
  if (
    finished !== undefined &&
    (typeof finished !== 'object' || finished === null || !Object.values(finished).every((q) => typeof q?.id === 'string' && typeof q.output === 'string' && Array.isArray(q.columns)))
  ) {
    problems.push('progress.finished: expected { <key>: { id, output, columns } } (a previous answer\'s)');
  }
  if (problems.length > 0) throw new SondageError(`report event: ${problems.join('; ')}; got ${JSON.stringify(event)}`);
  return e as ReportEvent;
}

/** The handler over its dependencies (tests pass clients of local S3 and Athena servers). */
export function createHandler(deps: ReportDeps) {
  const campaigns = campaignCache(deps.store, deps.tmpDir);
  const reserveMs = deps.reserveMs ?? REPORT_ROUNDS.reserveMs;
  // Rows of finished queries, kept while the container is warm (the rounds are 15 s apart).
  const resultCache = new Map<string, Record<string, Value>[]>();
  // Result files in the data bucket (the workgroup's location, athena-results/), read with the store.
  const readResultFile = async (output: string): Promise<Uint8Array | undefined> => {
    const prefix = `s3://${deps.bucket}/`;
    return output.startsWith(prefix) ? deps.store.get(output.slice(prefix.length)) : undefined;
  };
  const base = async (event: unknown, context: Context): Promise<ReportOutput | ReportAgain> => {
    const { campaign, queryExecutionId, maxRounds, progress } = parseEvent(event);
    const round = progress.round + 1;
    // The uploaded campaign names the battery whose analysis runs (the execution id keys the copy).
    const ctx = await campaigns(campaign, queryExecutionId);
    const db = deps.athena(
      { started: progress.queries, ...(progress.finished ? { finished: progress.finished } : {}), remainingMs: () => context.getRemainingTimeInMillis(), reserveMs, tokenSeed: queryExecutionId },
      { readResultFile, resultCache },
    );
    const run = await resumeAnalysisOnAthena({ db, store: deps.store, battery: ctx.battery, campaign: ctx.campaign, design: ctx.campaign.design, languages: ctx.design.languages, phases: ctx.graph.phases.map((p) => p.name), queryExecutionId });
    if (!run.done) {
      const r = run.stillRunning;
      const running = { query: r.query ?? r.excerpt, queryExecutionId: r.queryExecutionId, state: r.state };
      if (round >= maxRounds) {
        // Nobody will read it: stop paying for it. The error says what happened either way.
        const stopped = await db.stop(r.queryExecutionId).then(
          () => 'stopped it',
          (err: unknown) => `could not stop it (${err instanceof Error ? err.message : String(err)})`,
        );
        throw new AnalysisQueriesStillRunning(
          `campaign ${campaign}: analysis query ${running.query} (Athena ${running.queryExecutionId}) still ${running.state} after ${round} rounds of the report ` +
            `(the limit, REPORT_ROUNDS.maxRounds in lib/config/sizing.ts); ${stopped}. ` +
            `Look at the Athena workgroup's running queries, then start the campaign again (\`sondage start --aws\`: nothing is asked again, the analysis runs anew).`,
        );
      }
      deps.logger.info('analysis queries still running', { campaign, round, maxRounds, running, started: Object.keys(db.started).length, remainingMs: context.getRemainingTimeInMillis() });
      deps.metrics.addDimension('campaign', campaign);
      deps.metrics.addMetric('ReportRounds', MetricUnit.Count, 1);
      return { again: true, waitSeconds: REPORT_ROUNDS.waitSeconds, round, queries: db.started, finished: db.finished, running };
    }
    const files: string[] = [];
    const simulated = campaignEntries(ctx.campaign).some((m) => m.provider === 'simulated');
    for (const [name, content] of ctx.battery.analysis.files(run.results, { campaign, simulated, source: `s3://${deps.bucket}/${campaignPrefix(campaign)}`, spend: awsReportSpend(ctx.campaign, run.spentUsd, await deps.ledger.overrunOf(campaign)) })) {
      const key = resultsKey(campaign, name);
      await deps.store.put(key, content);
      files.push(key);
    }
    // As the local analysis writes it: the simulated models' truth beside what was recovered.
    const truth = simulationTruthFile(ctx);
    if (truth !== undefined) {
      const key = resultsKey(campaign, truth[0]);
      await deps.store.put(key, truth[1]);
      files.push(key);
    }
    deps.logger.info('report written', {
      campaign,
      battery: ctx.battery.name,
      models: run.models,
      files: files.length,
      round,
      adoptedSqlStep: run.adopted,
      queryExecutionIds: run.queryExecutionIds,
    });
    deps.metrics.addDimension('campaign', campaign);
    deps.metrics.addMetric('ReportFiles', MetricUnit.Count, files.length);
    deps.metrics.addMetric('AthenaQueries', MetricUnit.Count, run.queryExecutionIds.length - (run.adopted ? 1 : 0));
    return { resultsPrefix: `${campaignPrefix(campaign)}results/`, files };
  };
  return middy(base).use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics));
}

/**
 * The Lambda entry point: dependencies built once per container, at the first invocation. The
 * endpoints follow the SDK's AWS_ENDPOINT_URL_ATHENA / AWS_ENDPOINT_URL_S3 (or SONDAGE_S3_ENDPOINT).
 */
export const handler = builtOnFirstCall<ReportOutput | ReportAgain>(() => {
  const bucket = requiredEnv(ENV.bucket, 'report');
  const workgroup = requiredEnv(ENV.athenaWorkgroup, 'report');
  const database = requiredEnv(ENV.glueDatabase, 'report');
  const s3Endpoint = process.env[ENV.s3Endpoint];
  return createHandler({
    athena: (resume, files) => new AthenaQueryable({ workgroup, database, resume, ...files, ...REPORT_ATHENA }),
    store: new S3BlobStore({ bucket, clientConfig: s3Endpoint ? { endpoint: s3Endpoint, forcePathStyle: true } : {} }),
    bucket,
    ledger: new DynamoLedger({ ledgerTable: requiredEnv(ENV.ledgerTable, 'report'), budgetTable: requiredEnv(ENV.budgetTable, 'report') }),
    tmpDir: '/tmp',
    ...powertools('report'),
  });
});
