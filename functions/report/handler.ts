/**
 * The state machine's "Report" state (issue 4: "Athena StartQueryExecution for the SQL stage, then a
 * Lambda for the statistics and the report, written to S3"): the campaign's battery's analysis with
 * its SQL stage on Athena (lib/analysis/athena.ts), written as the local run writes it, under
 * `campaigns/<campaign>/results/` in the data bucket.
 * Payload, from infra/constructs/Pipeline.ts: ReportEvent `{ campaign, queryExecutionId }`, where the
 * execution is the SQL step's; its results answer the analysis's first query instead of a re-run.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { analyzeOnAthena } from '../../lib/analysis/athena.js';
import { simulationTruthFile } from '../../lib/analysis/simulationTruth.js';
import { ENV } from '../../lib/config/index.js';
import type { ReportEvent, ReportOutput } from '../../lib/config/pipeline.js';
import { SondageError } from '../../lib/errors.js';
import { campaignEntries } from '../../lib/design/campaign.js';
import { campaignCache } from '../../lib/run/campaignInput.js';
import { AthenaQueryable } from '../../lib/store/AthenaQueryable.js';
import { campaignPrefix, isSafeSegment, resultsKey } from '../../lib/store/layout.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import type { BlobStore } from '../../lib/store/types.js';

export interface ReportDeps {
  /** A fresh Queryable per invocation (it remembers the executions it adopted and ran). */
  readonly athena: () => AthenaQueryable;
  /** The data bucket: the campaign's Parquet is listed from it, the results are written to it. */
  readonly store: BlobStore;
  /** Bucket name, for the `Source` line of summary.md. */
  readonly bucket: string;
  /** Local scratch folder (Lambda: /tmp): the uploaded campaign is copied under it. */
  readonly tmpDir: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

function parseEvent(event: unknown): ReportEvent {
  const e = event as Partial<ReportEvent> | null;
  const problems: string[] = [];
  if (typeof e?.campaign !== 'string' || !isSafeSegment(e.campaign)) problems.push('campaign: expected a campaign id (letters, digits, ., _, -)');
  if (typeof e?.queryExecutionId !== 'string' || e.queryExecutionId === '') {
    problems.push('queryExecutionId: expected the SQL step\'s $.sql.QueryExecution.QueryExecutionId');
  }
  if (problems.length > 0) throw new SondageError(`report event: ${problems.join('; ')}; got ${JSON.stringify(event)}`);
  return e as ReportEvent;
}

/** The handler over its dependencies (tests pass clients of local S3 and Athena servers). */
export function createHandler(deps: ReportDeps) {
  const campaigns = campaignCache(deps.store, deps.tmpDir);
  const base = async (event: unknown, _context: Context): Promise<ReportOutput> => {
    const { campaign, queryExecutionId } = parseEvent(event);
    // The uploaded campaign names the battery whose analysis runs (the execution id keys the copy).
    const ctx = await campaigns(campaign, queryExecutionId);
    const db = deps.athena();
    const run = await analyzeOnAthena({ db, store: deps.store, battery: ctx.battery, campaign: ctx.campaign, design: ctx.campaign.design, languages: ctx.design.languages, phases: ctx.graph.phases.map((p) => p.name), queryExecutionId });
    const files: string[] = [];
    const simulated = campaignEntries(ctx.campaign).some((m) => m.provider === 'simulated');
    for (const [name, content] of ctx.battery.analysis.files(run.results, { campaign, simulated, source: `s3://${deps.bucket}/${campaignPrefix(campaign)}` })) {
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

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new SondageError(`report: environment variable ${name} is not set (the stack sets it)`);
  return value;
}

let cold: ReturnType<typeof createHandler> | undefined;

/**
 * The Lambda entry point: dependencies built once per container, at the first invocation. The
 * endpoints follow the SDK's AWS_ENDPOINT_URL_ATHENA / AWS_ENDPOINT_URL_S3 (or SONDAGE_S3_ENDPOINT).
 */
export const handler = (event: unknown, context: Context): Promise<ReportOutput> => {
  if (!cold) {
    const bucket = required(ENV.bucket);
    const workgroup = required(ENV.athenaWorkgroup);
    const database = required(ENV.glueDatabase);
    const s3Endpoint = process.env[ENV.s3Endpoint];
    cold = createHandler({
      athena: () => new AthenaQueryable({ workgroup, database }),
      store: new S3BlobStore({ bucket, clientConfig: s3Endpoint ? { endpoint: s3Endpoint, forcePathStyle: true } : {} }),
      bucket,
      tmpDir: '/tmp',
      logger: new Logger({ serviceName: 'sondage-report' }),
      metrics: new Metrics({ namespace: 'sondage', serviceName: 'sondage-report' }),
    });
  }
  return cold(event, context);
};
