/** The intrinsic functions, each on a value whose answer is known, through a Pass state's Parameters. */
import { describe, expect, it } from 'vitest';
import { run } from './testing.js';
import type { Json } from './types.js';

async function evaluate(expression: string, input: Json = {}): Promise<Json> {
  const out = await run({ StartAt: 'P', States: { P: { Type: 'Pass', Parameters: { 'v.$': expression }, OutputPath: '$.v', End: true } } }, input);
  if (out.result.status !== 'SUCCEEDED') throw new Error(`${out.result.error}: ${out.result.cause}`);
  return out.result.output;
}

const INPUT = { name: 'run-1', n: 3, list: [1, 2, 2, 3], obj: { a: 1 }, text: '{"k":[1,2]}' };

describe('intrinsic functions', () => {
  it.each([
    ["States.Format('{}-gpu', $.name)", 'run-1-gpu'],
    ["States.Format('{} has {} items: {}', $.name, $.n, true)", 'run-1 has 3 items: true'],
    ["States.Format('literal \\{\\} and {}', null)", 'literal {} and null'],
    ["States.Format('it\\'s {}', 'fine')", "it's fine"],
    ['States.StringToJson($.text)', { k: [1, 2] }],
    ['States.JsonToString($.obj)', '{"a":1}'],
    ["States.Array(1, 'two', $.obj)", [1, 'two', { a: 1 }]],
    ['States.ArrayPartition($.list, 3)', [[1, 2, 2], [3]]],
    ['States.ArrayContains($.list, 3)', true],
    ['States.ArrayContains($.list, 9)', false],
    ['States.ArrayRange(1, 9, 3)', [1, 4, 7]],
    ['States.ArrayGetItem($.list, 3)', 3],
    ['States.ArrayLength($.list)', 4],
    ['States.ArrayUnique($.list)', [1, 2, 3]],
    ["States.Base64Encode('sondage')", 'c29uZGFnZQ=='],
    ["States.Base64Decode('c29uZGFnZQ==')", 'sondage'],
    ["States.Hash('abc', 'SHA-256')", 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ["States.JsonMerge($.obj, States.StringToJson('{\"b\":2}'), false)", { a: 1, b: 2 }],
    ['States.MathAdd($.n, -5)', -2],
    ["States.StringSplit('a,b;;c', ',;')", ['a', 'b', 'c']],
    ['States.ArrayLength(States.StringSplit($.name, \'-\'))', 2],
  ])('%s → %j', async (expression, expected) => {
    expect(await evaluate(expression, INPUT)).toEqual(expected);
  });

  it('draws MathRandom within its bounds, the same number for the same seed; UUID is a v4 UUID', async () => {
    const a = await evaluate('States.MathRandom(1, 6, 42)');
    expect(await evaluate('States.MathRandom(1, 6, 42)')).toBe(a);
    for (let i = 0; i < 20; i++) {
      const v = (await evaluate('States.MathRandom(1, 6)')) as number;
      expect(v >= 1 && v <= 6 && Number.isInteger(v)).toBe(true);
    }
    expect(await evaluate('States.UUID()')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('fails the state with States.IntrinsicFailure on bad values, which a Catch can take', async () => {
    await expect(evaluate("States.Format('{} {}', 1)")).rejects.toThrow(/States.IntrinsicFailure: States.Format: the template has more \{\} than the 1 value/);
    await expect(evaluate('States.ArrayGetItem($.list, 9)', INPUT)).rejects.toThrow(/States.IntrinsicFailure: States.ArrayGetItem: index 9 is out of range/);
    await expect(evaluate("States.StringToJson('{not json')")).rejects.toThrow(/States.IntrinsicFailure/);
    await expect(evaluate("States.Format('{}', $.obj)", INPUT)).rejects.toThrow(/only strings, numbers, booleans and null/);
    const def = {
      StartAt: 'T',
      States: {
        T: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:fn', Parameters: { 'v.$': 'States.ArrayGetItem($.list, 9)' }, Catch: [{ ErrorEquals: ['States.IntrinsicFailure'], Next: 'Ok' }], End: true },
        Ok: { Type: 'Succeed' },
      },
    };
    expect((await run(def, INPUT, { 'arn:aws:lambda:us-east-1:123456789012:function:fn': async () => 1 })).result.status).toBe('SUCCEEDED');
  });
});
