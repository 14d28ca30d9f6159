/**
 * The state machine's "Record failure" state: writes the failed step into the ledger so that
 * `sondage status` shows it.
 * Payload, from infra/constructs/Pipeline.ts:
 * `{ campaign, execution: $$.Execution.Id, failure: { Error, Cause } }` (the Catch's ResultPath).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { ENV } from '../../lib/config/index.js';
import { SondageError } from '../../lib/errors.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { builtOnFirstCall } from '../shared/builtOnFirstCall.js';
import { powertools } from '../shared/powertools.js';
import { requiredEnv } from '../shared/requiredEnv.js';

export interface RecordFailureEvent {
  readonly campaign: string;
  readonly execution: string;
  readonly failure: { readonly Error?: string; readonly Cause?: string };
}

export interface RecordFailureDeps {
  readonly ledger: Pick<DynamoLedger, 'recordFailure'>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now?: () => Date;
}

function parseEvent(event: unknown): RecordFailureEvent {
  const e = event as Partial<RecordFailureEvent> | null;
  const problems: string[] = [];
  if (typeof e?.campaign !== 'string' || e.campaign === '') problems.push('campaign: expected a non-empty string');
  if (typeof e?.execution !== 'string' || e.execution === '') problems.push('execution: expected the execution ARN');
  if (typeof e?.failure !== 'object' || e.failure === null) problems.push('failure: expected the Catch output { Error, Cause }');
  if (problems.length > 0) throw new SondageError(`record-failure event: ${problems.join('; ')}; got ${JSON.stringify(event)}`);
  return e as RecordFailureEvent;
}

/** The handler over its dependencies (tests pass a ledger on a local server). */
export function createHandler(deps: RecordFailureDeps) {
  const base = async (event: unknown, _context: Context): Promise<{ recorded: true }> => {
    const e = parseEvent(event);
    const failure = {
      campaign: e.campaign,
      execution: e.execution,
      at: (deps.now?.() ?? new Date()).toISOString(),
      error: e.failure.Error ?? 'Unknown',
      cause: e.failure.Cause ?? '',
    };
    await deps.ledger.recordFailure(failure);
    deps.logger.error('campaign step failed', { campaign: failure.campaign, execution: failure.execution, error: failure.error });
    deps.metrics.addDimension('campaign', failure.campaign);
    deps.metrics.addMetric('StepFailures', MetricUnit.Count, 1);
    return { recorded: true };
  };
  return middy(base).use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics));
}

/** The Lambda entry point: dependencies built once per container, at the first invocation. */
export const handler = builtOnFirstCall<{ recorded: true }>(() =>
  createHandler({
    ledger: new DynamoLedger({ ledgerTable: requiredEnv(ENV.ledgerTable, 'record-failure'), budgetTable: requiredEnv(ENV.budgetTable, 'record-failure') }),
    ...powertools('record-failure'),
  }),
);
