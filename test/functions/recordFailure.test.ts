import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
// eslint-disable-next-line no-restricted-imports -- the handler's own Context type; lib/ still may not import it
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../functions/record-failure/handler.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { startDynamoServer } from '../store/dynamoServer.js';
import type { DynamoServer } from '../store/dynamoServer.js';

let server: DynamoServer;
let ledger: DynamoLedger;
beforeAll(async () => {
  server = await startDynamoServer();
  ledger = new DynamoLedger({
    ledgerTable: 'ledger',
    budgetTable: 'budget',
    clientConfig: { endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 },
  });
});
afterAll(async () => {
  await ledger.close();
  await server.close();
});

const context = { functionName: 'record-failure', awsRequestId: 'req-1', invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:rf' } as Context;

function handlerFor() {
  const logs: string[] = [];
  const logger = new Logger({ serviceName: 'test', logLevel: 'ERROR' });
  // Powertools writes to its console; collect the lines instead of printing them.
  const sink = { error: (l: string) => logs.push(l), info: (l: string) => logs.push(l), log: (l: string) => logs.push(l), warn: (l: string) => logs.push(l), debug: () => {}, trace: () => {} };
  Object.assign(logger as unknown as { console: unknown }, { console: sink });
  const metrics = new Metrics({ namespace: 'sondage-test', serviceName: 'test' });
  Object.assign(metrics as unknown as { console: unknown }, { console: sink });
  const handler = createHandler({ ledger, logger, metrics, now: () => new Date('2026-11-30T06:00:00.000Z') });
  return { handler, logs };
}

describe('record-failure handler', () => {
  it('records the payload the "Record failure" state sends, and the ledger reads it back', async () => {
    // prepare: exactly what the state machine passes (Pipeline.ts: campaign, $$.Execution.Id, the Catch output)
    const event = {
      campaign: 'far6-demo',
      execution: 'arn:aws:states:us-east-1:123456789012:execution:sondage-Sondage:run-7',
      failure: { Error: 'States.TaskFailed', Cause: '{"errorMessage":"budget table missing"}' },
    };
    const { handler, logs } = handlerFor();
    // act
    const out = await handler(event, context);
    // assess
    expect(out).toEqual({ recorded: true });
    expect(await ledger.failures('far6-demo')).toEqual([
      { campaign: 'far6-demo', execution: event.execution, at: '2026-11-30T06:00:00.000Z', error: 'States.TaskFailed', cause: event.failure.Cause },
    ]);
    expect(logs.some((l) => l.includes('"campaign step failed"') && l.includes('"far6-demo"'))).toBe(true);
    expect(logs.some((l) => l.includes('"StepFailures"'))).toBe(true); // the metric was flushed as EMF
  });

  it('refuses a malformed event and names what is missing', async () => {
    const { handler } = handlerFor();
    await expect(handler({ campaign: '', failure: null }, context)).rejects.toThrow(
      /record-failure event: campaign: expected a non-empty string; execution: expected the execution ARN; failure: expected the Catch output/,
    );
  });
});
