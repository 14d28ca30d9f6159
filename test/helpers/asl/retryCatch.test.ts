/**
 * Retry and Catch on hand-written definitions: which Retrier applies and how often, the delays it
 * would wait, the Catcher chosen and what it hands on, how a Lambda function's exception is named,
 * and what the optimized lambda:invoke integration returns.
 */
import { describe, expect, it } from 'vitest';
import { retryDelaySeconds } from './retryCatch.js';
import { FN, FN2, outputOf, run } from './testing.js';
import type { HistoryEvent, Json } from './types.js';

class Named extends Error {
  constructor(name: string, message = `a ${name}`) {
    super(message);
    this.name = name;
  }
}

/** A function that throws the listed errors in turn, then answers `done`. */
function failing(...errors: string[]) {
  const calls: Json[] = [];
  const fn = async (p: Json) => {
    calls.push(p);
    const e = errors[calls.length - 1];
    if (e) throw new Named(e);
    return 'done';
  };
  return { fn, calls };
}

/** A machine of one Task state T that calls FN and ends the execution, with `task`'s fields and beside `more` states. */
function taskMachine(task: Record<string, unknown>, more: Record<string, unknown> = {}) {
  return { StartAt: 'T', States: { T: { Type: 'Task', Resource: FN, ...task, End: true }, ...more } };
}

const retries = (h: readonly HistoryEvent[]) => h.filter((e) => e.type === 'Retried').map((e) => [e.error, e.attempt, e.delaySeconds]);

describe('Retry', () => {
  it('uses the first Retrier that names the error, each with its own attempts and backoff, delays recorded not slept', async () => {
    const def = taskMachine({
      Retry: [
        { ErrorEquals: ['Throttled'], IntervalSeconds: 2, MaxAttempts: 3, BackoffRate: 3, MaxDelaySeconds: 10 },
        { ErrorEquals: ['Broken', 'Throttled'], IntervalSeconds: 1, MaxAttempts: 1 },
      ],
    });
    const ok = failing('Throttled', 'Broken', 'Throttled', 'Throttled');
    const started = Date.now();
    const out = await run(def, {}, { [FN]: ok.fn });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(out.result).toEqual({ status: 'SUCCEEDED', output: 'done' });
    expect(retries(out.history)).toEqual([
      ['Throttled', 1, 2],
      ['Broken', 1, 1],
      ['Throttled', 2, 6],
      ['Throttled', 3, 10], // 2 × 3² = 18, capped at MaxDelaySeconds
    ]);
    // A fourth Throttled: its Retrier is used up, and the second Retrier is not consulted.
    const spent = failing('Throttled', 'Throttled', 'Throttled', 'Throttled');
    expect((await run(def, {}, { [FN]: spent.fn })).result).toMatchObject({ status: 'FAILED', error: 'Throttled' });
    expect(spent.calls).toHaveLength(4);
  });

  it('defaults to 3 attempts, 1 s, rate 2; MaxAttempts 0 never retries', async () => {
    expect([1, 2, 3].map((n) => retryDelaySeconds({ ErrorEquals: ['X'] }, n))).toEqual([1, 2, 4]);
    const def = (retry: object) => taskMachine({ Retry: [retry] });
    const four = failing('X', 'X', 'X', 'X');
    expect((await run(def({ ErrorEquals: ['X'] }), {}, { [FN]: four.fn })).result.status).toBe('FAILED');
    expect(four.calls).toHaveLength(4);
    const never = failing('X');
    expect((await run(def({ ErrorEquals: ['X'], MaxAttempts: 0 }), {}, { [FN]: never.fn })).result.status).toBe('FAILED');
    expect(never.calls).toHaveLength(1);
  });

  it('reads States.TaskFailed as every error but States.Timeout, and States.ALL as every error', async () => {
    const def = (names: string[]) => taskMachine({ Retry: [{ ErrorEquals: names, MaxAttempts: 1 }] });
    const custom = failing('MyError');
    expect((await run(def(['States.TaskFailed']), {}, { [FN]: custom.fn })).result.status).toBe('SUCCEEDED');
    const timeout = failing('States.Timeout');
    expect((await run(def(['States.TaskFailed']), {}, { [FN]: timeout.fn })).result).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
    const any = failing('States.Timeout');
    expect((await run(def(['States.ALL']), {}, { [FN]: any.fn })).result.status).toBe('SUCCEEDED');
  });
});

describe('Catch', () => {
  it('takes the first Catcher that names the error and hands on { Error, Cause } at its ResultPath', async () => {
    const def = taskMachine(
      {
        Retry: [{ ErrorEquals: ['Transient'], MaxAttempts: 1 }],
        Catch: [
          { ErrorEquals: ['Other'], Next: 'Wrong' },
          { ErrorEquals: ['Transient', 'Boom'], ResultPath: '$.failure', Next: 'Handled' },
          { ErrorEquals: ['States.ALL'], Next: 'Wrong' },
        ],
      },
      { Handled: { Type: 'Pass', End: true }, Wrong: { Type: 'Fail', Error: 'WrongCatcher' } },
    );
    const f = failing('Transient', 'Boom');
    const out = await run(def, { keep: 1 }, { [FN]: f.fn });
    expect(out.result.status).toBe('SUCCEEDED');
    const output = outputOf<{ keep: number; failure: { Error: string; Cause: string } }>(out);
    expect(output.keep).toBe(1);
    expect(output.failure.Error).toBe('Boom');
    // Lambda's error JSON: the error type, the message and the stack.
    expect(JSON.parse(output.failure.Cause)).toMatchObject({ errorType: 'Boom', errorMessage: 'a Boom', trace: expect.arrayContaining([expect.stringContaining('Boom: a Boom')]) as unknown });
    expect(out.history.filter((e) => e.type === 'Caught')).toEqual([expect.objectContaining({ state: 'T', error: 'Boom', next: 'Handled' })]);
  });

  it('hands on the raw input with ResultPath null, the error itself by default, and ends the execution without a Catcher', async () => {
    const def = (catcher: object | undefined) =>
      catcher ? taskMachine({ Catch: [{ ErrorEquals: ['States.ALL'], Next: 'End', ...catcher }] }, { End: { Type: 'Pass', End: true } }) : taskMachine({});
    const boom = async () => {
      throw new Named('Boom', 'no');
    };
    expect((await run(def({ ResultPath: null }), { a: 1 }, { [FN]: boom })).result).toEqual({ status: 'SUCCEEDED', output: { a: 1 } });
    expect((await run(def({}), { a: 1 }, { [FN]: boom })).result).toMatchObject({ status: 'SUCCEEDED', output: { Error: 'Boom' } });
    expect((await run(def(undefined), { a: 1 }, { [FN]: boom })).result).toMatchObject({ status: 'FAILED', error: 'Boom', cause: expect.stringContaining('"errorMessage":"no"') as unknown });
  });

  it('catches a Parallel branch failure (a Fail state in it) on the Parallel', async () => {
    const def = {
      StartAt: 'P',
      States: {
        P: {
          Type: 'Parallel',
          Branches: [
            { StartAt: 'A', States: { A: { Type: 'Task', Resource: FN, End: true } } },
            { StartAt: 'B', States: { B: { Type: 'Fail', Error: 'BranchGaveUp', Cause: 'why' } } },
          ],
          Catch: [{ ErrorEquals: ['BranchGaveUp'], Next: 'After' }],
          End: true,
        },
        After: { Type: 'Pass', End: true },
      },
    };
    const out = await run(def, {}, { [FN]: async () => 'a' });
    expect(out.result).toEqual({ status: 'SUCCEEDED', output: { Error: 'BranchGaveUp', Cause: 'why' } });
  });
});

describe('Lambda integrations', () => {
  it('calls a function by ARN with the parameters, or through lambda:invoke with its Payload, whose result wraps the answer', async () => {
    const def = {
      StartAt: 'Direct',
      States: {
        Direct: { Type: 'Task', Resource: FN, Parameters: { 'v.$': '$.v' }, ResultPath: '$.direct', Next: 'Optimized' },
        Optimized: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Parameters: { FunctionName: FN2, 'Payload.$': '$.direct' },
          ResultSelector: { 'payload.$': '$.Payload', 'status.$': '$.StatusCode' },
          ResultPath: '$.optimized',
          End: true,
        },
      },
    };
    const out = await run(def, { v: 2 }, { [FN]: async (p) => ({ doubled: (p as { v: number }).v * 2 }), [FN2]: async (p) => ({ echo: p }) });
    expect(out.result).toEqual({ status: 'SUCCEEDED', output: { v: 2, direct: { doubled: 4 }, optimized: { payload: { echo: { doubled: 4 } }, status: 200 } } });
  });

  it('passes a thrown StatesError through as the service error it names (a throttled invoke)', async () => {
    const { StatesError } = await import('./errors.js');
    const def = taskMachine({ Retry: [{ ErrorEquals: ['Lambda.TooManyRequestsException'], MaxAttempts: 2 }] });
    let n = 0;
    const out = await run(def, {}, {
      [FN]: async () => {
        if (++n < 3) throw new StatesError('Lambda.TooManyRequestsException', 'Rate exceeded');
        return n;
      },
    });
    expect(out.result).toEqual({ status: 'SUCCEEDED', output: 3 });
  });
});
