/**
 * What the interpreter refuses, before any state runs and naming the state: constructs it does not
 * implement are never passed over. Also: Wait is recorded, not slept; a loop that never ends is
 * stopped; execution names are checked as StartExecution checks them; asl-validator runs on request.
 */
import { describe, expect, it } from 'vitest';
import { AslDefinitionError, UnsupportedAslError } from './errors.js';
import { startExecution } from './interpreter.js';
import { FN, run, single } from './testing.js';

describe('refused constructs', () => {
  it.each([
    ['a JSONata state', { Type: 'Pass', QueryLanguage: 'JSONata', Output: 1 }, /QueryLanguage "JSONata"/],
    ['a Task timeout', { Type: 'Task', Resource: FN, TimeoutSeconds: 30 }, /field TimeoutSeconds of a Task state/],
    ['a service it does not stand in for', { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', Parameters: {} }, /Task Resource "arn:aws:states:::dynamodb:putItem"/],
    ['a callback task', { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken', Parameters: {} }, /lambda:invoke.waitForTaskToken/],
    ['a JSONPath filter', { Type: 'Pass', Parameters: { 'x.$': '$.items[?(@.a > 1)]' } }, /only \['name'\], \[index\] and \[\*\] are implemented/],
    ['a deep scan', { Type: 'Pass', Parameters: { 'x.$': '$..a' } }, /deep scan/],
    ['an unknown intrinsic', { Type: 'Pass', Parameters: { 'x.$': 'States.Nope(1)' } }, /intrinsic function States.Nope is not implemented/],
    ['variables', { Type: 'Pass', Assign: { x: 1 } }, /field Assign of a Pass state/],
    ['a wildcard InputPath', { Type: 'Pass', InputPath: '$.a[*]' }, /InputPath "\$.a\[\*\]" must be a reference path/],
    ['an unknown Choice operator', { Type: 'Choice', Choices: [{ Variable: '$.a', StringContains: 'x', Next: 'S' }] }, /exactly one of .*got StringContains/],
  ])('refuses %s, naming the state', async (_what, state, message) => {
    const err = await run(single(state), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedAslError);
    expect((err as Error).message).toMatch(/^state "S": unsupported by the test ASL interpreter: /);
    expect((err as Error).message).toMatch(message);
  });

  it('refuses a Distributed Map reading CSV, and a state inside an ItemProcessor, before anything runs', async () => {
    const calls: unknown[] = [];
    const def = {
      StartAt: 'First',
      States: {
        First: { Type: 'Task', Resource: FN, Next: 'M' },
        M: {
          Type: 'Map',
          ItemReader: { Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'CSV', CSVHeaderLocation: 'FIRST_ROW' }, Parameters: { Bucket: 'b', Key: 'k' } },
          ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' }, StartAt: 'X', States: { X: { Type: 'Succeed' } } },
          End: true,
        },
      },
    };
    await expect(run(def, {}, { [FN]: async () => calls.push(1) })).rejects.toThrow(/^state "M": .*ReaderConfig.CSVHeaderLocation/);
    const inner = { StartAt: 'M', States: { M: { Type: 'Map', ItemProcessor: { StartAt: 'X', States: { X: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage', End: true } } }, End: true } } };
    await expect(run(inner, [])).rejects.toThrow(/^state "X": .*sqs:sendMessage/);
    expect(calls).toEqual([]);
  });

  it('refuses a definition Step Functions would refuse: a Next to no state, a missing End', async () => {
    await expect(run({ StartAt: 'A', States: { A: { Type: 'Pass', Next: 'Nowhere' } } }, {})).rejects.toThrow(AslDefinitionError);
    await expect(run({ StartAt: 'A', States: { A: { Type: 'Pass' } } }, {})).rejects.toThrow(/exactly one of Next and End/);
    await expect(startExecution({ StartAt: 'A', States: { A: { Type: 'Pass', Next: 'A', End: true } } }, {}, { integrations: {} })).rejects.toThrow(/asl-validator refuses the definition/);
  });

  it('records a Wait instead of sleeping, with the seconds or timestamp it would wait', async () => {
    const def = {
      StartAt: 'W1',
      States: {
        W1: { Type: 'Wait', Seconds: 864000, Next: 'W2' },
        W2: { Type: 'Wait', SecondsPath: '$.poll', Next: 'W3' },
        W3: { Type: 'Wait', TimestampPath: '$.at', End: true },
      },
    };
    const seen: unknown[] = [];
    const started = Date.now();
    const out = await run(def, { poll: 60, at: '2030-01-01T00:00:00Z' }, {}, { onWait: (w) => void seen.push(w.seconds ?? w.timestamp) });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(out.result).toEqual({ status: 'SUCCEEDED', output: { poll: 60, at: '2030-01-01T00:00:00Z' } });
    expect(seen).toEqual([864000, 60, '2030-01-01T00:00:00Z']);
    expect((await run(def, { poll: -1, at: 'x' })).result).toMatchObject({ status: 'FAILED', error: 'States.Runtime' });
  });

  it('stops a loop that never ends, and checks the execution name', async () => {
    const loop = { StartAt: 'A', States: { A: { Type: 'Pass', Next: 'B' }, B: { Type: 'Pass', Next: 'A' } } };
    expect((await run(loop, {}, {}, { maxTransitions: 50 })).result).toMatchObject({ status: 'FAILED', error: 'States.Runtime', cause: expect.stringContaining('more than 50 state transitions') as unknown });
    await expect(run(single({ Type: 'Succeed' }), {}, {}, { name: 'has space' })).rejects.toThrow(/InvalidName/);
    await expect(run(single({ Type: 'Succeed' }), {}, {}, { name: 'x'.repeat(81) })).rejects.toThrow(/InvalidName/);
    expect((await run(single({ Type: 'Succeed' }), {}, {}, { name: 'campaign.v2-20260101T000000Z' })).result.status).toBe('SUCCEEDED');
  });

  it('ends with the Fail state\'s Error and Cause, read from paths where given', async () => {
    const def = single({ Type: 'Fail', Error: 'SondageFailed', CausePath: '$.failure.Cause' });
    expect((await run(def, { failure: { Cause: 'the plan failed' } })).result).toEqual({ status: 'FAILED', error: 'SondageFailed', cause: 'the plan failed' });
    const formatted = single({ Type: 'Fail', ErrorPath: "States.Format('E{}', $.n)", Cause: 'c' });
    expect((await run(formatted, { n: 7 })).result).toEqual({ status: 'FAILED', error: 'E7', cause: 'c' });
  });
});
