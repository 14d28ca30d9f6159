// eslint-disable-next-line no-restricted-imports -- the handler's own Context type; lib/ still may not import it
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../functions/record-failure/handler.js';
import { useLocalDynamoLedger } from '../helpers/localDynamoLedger.js';
import { collectingPowertools } from '../helpers/powertools.js';

const dynamo = useLocalDynamoLedger();

const context = { functionName: 'record-failure', awsRequestId: 'req-1', invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:rf' } as Context;

function handlerFor() {
  const { logger, metrics, logs } = collectingPowertools({ logLevel: 'ERROR' });
  const handler = createHandler({ ledger: dynamo.ledger, logger, metrics, now: () => new Date('2026-11-30T06:00:00.000Z') });
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
    expect(await dynamo.ledger.failures('far6-demo')).toEqual([
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
