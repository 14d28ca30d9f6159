/**
 * Input and output processing as states-language.net defines it, on hand-written definitions:
 * the order InputPath → Parameters → (task) → ResultSelector → ResultPath → OutputPath, the null
 * forms, the context object, JSON copies at every boundary, and the 256 KiB quota.
 */
import { describe, expect, it } from 'vitest';
import { FN, run, single } from './testing.js';
import type { Json } from './types.js';

describe('input and output processing', () => {
  it('applies InputPath, Parameters, ResultSelector, ResultPath and OutputPath in that order', async () => {
    // prepare: each step leaves a trace only the next one can see
    const seen: Json[] = [];
    const definition = single({
      Type: 'Task',
      Resource: FN,
      InputPath: '$.job',
      Parameters: { 'id.$': '$.id', fixed: 'f', 'name.$': '$$.Execution.Name', 'nested': { 'deep.$': '$.deep[1]' } },
      ResultSelector: { 'total.$': '$.sum', 'tag.$': 'States.Format(\'{}-{}\', $.sum, $$.State.Name)' },
      ResultPath: '$.job.out',
      OutputPath: '$.job',
    });
    // act
    const run1 = await run(definition, { job: { id: 7, deep: ['a', 'b'] }, other: true }, { [FN]: async (p) => (seen.push(p), { sum: 42, noise: 'x' }) }, { name: 'exec-1' });
    // assess: the function saw Parameters over the InputPath; the output is the OutputPath of the raw input with the result placed
    expect(seen).toEqual([{ id: 7, fixed: 'f', name: 'exec-1', nested: { deep: 'b' } }]);
    expect(run1.result).toEqual({ status: 'SUCCEEDED', output: { id: 7, deep: ['a', 'b'], out: { total: 42, tag: '42-S' } } });
  });

  it('reads null paths as the language says: InputPath null → {}, ResultPath null → the raw input, OutputPath null → {}', async () => {
    const inputs: Json[] = [];
    const fn = async (p: Json) => (inputs.push(p), 'result');
    expect((await run(single({ Type: 'Task', Resource: FN, InputPath: null }), { a: 1 }, { [FN]: fn })).result).toEqual({ status: 'SUCCEEDED', output: 'result' });
    expect(inputs).toEqual([{}]);
    expect((await run(single({ Type: 'Task', Resource: FN, ResultPath: null }), { a: 1 }, { [FN]: fn })).result).toEqual({ status: 'SUCCEEDED', output: { a: 1 } });
    expect((await run(single({ Type: 'Task', Resource: FN, OutputPath: null }), { a: 1 }, { [FN]: fn })).result).toEqual({ status: 'SUCCEEDED', output: {} });
    expect((await run(single({ Type: 'Task', Resource: FN, ResultPath: '$.x.y.z' }), { a: 1 }, { [FN]: fn })).result).toEqual({ status: 'SUCCEEDED', output: { a: 1, x: { y: { z: 'result' } } } });
  });

  it('gives Pass its Result, or its effective input, at the ResultPath', async () => {
    const def = {
      StartAt: 'A',
      States: {
        A: { Type: 'Pass', Result: { n: 1 }, ResultPath: '$.fromResult', Next: 'B' },
        B: { Type: 'Pass', Parameters: { 'copy.$': '$.fromResult.n', 'list.$': '$.items[*].v' }, ResultPath: '$.fromParameters', Next: 'C' },
        C: { Type: 'Pass', InputPath: '$.fromParameters', End: true },
      },
    };
    const out = await run(def, { items: [{ v: 'x' }, { v: 'y' }, { w: 'z' }] });
    expect(out.result).toEqual({ status: 'SUCCEEDED', output: { copy: 1, list: ['x', 'y'] } });
  });

  it('fails with States.ResultPathMatchFailure, which a Catch can take, when the ResultPath runs into a non-object', async () => {
    const def = {
      StartAt: 'T',
      States: {
        T: { Type: 'Task', Resource: FN, ResultPath: '$.a.b', Catch: [{ ErrorEquals: ['States.ResultPathMatchFailure'], ResultPath: '$.err', Next: 'Done' }], Next: 'Done' },
        Done: { Type: 'Succeed' },
      },
    };
    const out = await run(def, { a: 'text' }, { [FN]: async () => 1 });
    expect(out.result).toMatchObject({ status: 'SUCCEEDED', output: { a: 'text', err: { Error: 'States.ResultPathMatchFailure' } } });
  });

  it('fails the execution with States.Runtime when a path is missing, and no States.ALL catches it', async () => {
    const def = {
      StartAt: 'T',
      States: {
        T: { Type: 'Task', Resource: FN, Parameters: { 'x.$': '$.missing' }, Retry: [{ ErrorEquals: ['States.ALL'] }], Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Done' }], End: true },
        Done: { Type: 'Succeed' },
      },
    };
    const calls: Json[] = [];
    const out = await run(def, { present: 1 }, { [FN]: async (p) => calls.push(p) });
    expect(out.result).toMatchObject({ status: 'FAILED', error: 'States.Runtime', cause: expect.stringContaining("The JSONPath \"$.missing\" specified for the field \"x.$\" could not be found") as unknown });
    expect(calls).toEqual([]);
    expect(out.history.filter((e) => e.type === 'Retried' || e.type === 'Caught')).toEqual([]);
  });

  it('hands a function a JSON copy and keeps only what JSON keeps of its answer', async () => {
    const def = { StartAt: 'T', States: { T: { Type: 'Task', Resource: FN, ResultPath: '$.r', Next: 'U' }, U: { Type: 'Task', Resource: FN, ResultPath: '$.s', End: true } } };
    let first = true;
    const out = await run(def, { keep: 'me' }, {
      [FN]: async (p) => {
        (p as Record<string, Json>)['keep'] = 'changed by the function';
        if (first) {
          first = false;
          return { when: new Date('2026-01-02T03:04:05.000Z'), gone: undefined, n: 1 };
        }
        return p;
      },
    });
    expect(out.result).toEqual({
      status: 'SUCCEEDED',
      output: { keep: 'me', r: { when: '2026-01-02T03:04:05.000Z', n: 1 }, s: { keep: 'changed by the function', r: { when: '2026-01-02T03:04:05.000Z', n: 1 } } },
    });
  });

  it('fails with States.DataLimitExceeded, caught by nothing, when a result is over 256 KiB', async () => {
    const def = { StartAt: 'T', States: { T: { Type: 'Task', Resource: FN, Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Done' }], End: true }, Done: { Type: 'Succeed' } } };
    const big = await run(def, {}, { [FN]: async () => 'x'.repeat(256 * 1024) });
    expect(big.result).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded' });
    const fits = await run(def, {}, { [FN]: async () => 'x'.repeat(256 * 1024 - 2) });
    expect(fits.result.status).toBe('SUCCEEDED');
  });

  it('gives the context object: execution name and input, state name, retry count', async () => {
    const def = single({
      Type: 'Task',
      Resource: FN,
      Parameters: { 'execution.$': '$$.Execution.Name', 'input.$': '$$.Execution.Input', 'state.$': '$$.State.Name', 'retry.$': '$$.State.RetryCount', 'machine.$': '$$.StateMachine.Id' },
      Retry: [{ ErrorEquals: ['Boom'], IntervalSeconds: 1 }],
    });
    const seen: Json[] = [];
    const out = await run(def, { a: 1 }, {
      [FN]: async (p) => {
        seen.push(p);
        if (seen.length === 1) throw Object.assign(new Error('first time'), { name: 'Boom' });
        return 'ok';
      },
    }, { name: 'ctx-1', stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:m' });
    expect(out.result.status).toBe('SUCCEEDED');
    expect(seen).toEqual([
      { execution: 'ctx-1', input: { a: 1 }, state: 'S', retry: 0, machine: 'arn:aws:states:us-east-1:123456789012:stateMachine:m' },
      { execution: 'ctx-1', input: { a: 1 }, state: 'S', retry: 1, machine: 'arn:aws:states:us-east-1:123456789012:stateMachine:m' },
    ]);
  });
});
