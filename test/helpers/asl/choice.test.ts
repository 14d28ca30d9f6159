/**
 * Choice rules on a hand-written definition: every comparison operator (and its …Path form), the
 * type tests, And / Or / Not, type mismatches (false), an absent Variable (States.Runtime, except
 * under IsPresent) and no match without a Default (States.NoChoiceMatched).
 */
import { describe, expect, it } from 'vitest';
import { stringMatches } from './choiceRules.js';
import { run } from './testing.js';
import type { Json } from './types.js';

/** Runs a Choice of one rule: 'yes' when it holds, 'no' otherwise. */
async function holds(rule: Record<string, unknown>, input: Json): Promise<string> {
  const def = {
    StartAt: 'C',
    States: {
      C: { Type: 'Choice', Choices: [{ ...rule, Next: 'Yes' }], Default: 'No' },
      Yes: { Type: 'Pass', Result: 'yes', End: true },
      No: { Type: 'Pass', Result: 'no', End: true },
    },
  };
  const out = await run(def, input);
  if (out.result.status !== 'SUCCEEDED') throw new Error(`${out.result.error}: ${out.result.cause}`);
  return out.result.output as string;
}

const INPUT = { s: 'beta', n: 5, b: true, t: '2026-03-01T12:00:00Z', other: { s: 'alpha', n: 5, b: false, t: '2026-03-01T12:00:00.000Z' }, nul: null, arr: [1] };

describe('Choice rules', () => {
  // INPUT: s "beta", n 5, t 12:00Z; other.s "alpha".
  it.each([
    ['$.s', 'StringEquals', 'beta', 'yes'],
    ['$.s', 'StringLessThan', 'gamma', 'yes'],
    ['$.s', 'StringGreaterThan', 'gamma', 'no'],
    ['$.s', 'StringLessThanEquals', 'beta', 'yes'],
    ['$.s', 'StringGreaterThanEquals', 'beta', 'yes'],
    ['$.n', 'NumericEquals', 5, 'yes'],
    ['$.n', 'NumericLessThan', 5, 'no'],
    ['$.n', 'NumericGreaterThan', 4.5, 'yes'],
    ['$.n', 'NumericLessThanEquals', 5, 'yes'],
    ['$.n', 'NumericGreaterThanEquals', 6, 'no'],
    ['$.t', 'TimestampEquals', '2026-03-01T12:00:00.000Z', 'yes'],
    ['$.t', 'TimestampLessThan', '2026-03-01T12:00:01Z', 'yes'],
    ['$.t', 'TimestampGreaterThan', '2026-03-01T13:00:00+02:00', 'yes'],
    ['$.t', 'TimestampLessThanEquals', '2026-02-28T00:00:00Z', 'no'],
    ['$.t', 'TimestampGreaterThanEquals', '2026-03-01T12:00:00Z', 'yes'],
    ['$.s', 'StringEqualsPath', '$.other.s', 'no'],
    ['$.s', 'StringGreaterThanPath', '$.other.s', 'yes'],
    ['$.s', 'StringLessThanPath', '$.other.s', 'no'],
    ['$.s', 'StringLessThanEqualsPath', '$.s', 'yes'],
    ['$.s', 'StringGreaterThanEqualsPath', '$.other.s', 'yes'],
  ])('%s %s %s → %s', async (variable, op, operand, expected) => {
    expect(await holds({ Variable: variable, [op]: operand }, INPUT)).toBe(expected);
  });

  it.each([
    [{ Variable: '$.n', NumericEqualsPath: '$.other.n' }, 'yes'],
    [{ Variable: '$.n', NumericLessThanPath: '$.other.n' }, 'no'],
    [{ Variable: '$.n', NumericGreaterThanPath: '$.other.n' }, 'no'],
    [{ Variable: '$.n', NumericLessThanEqualsPath: '$.other.n' }, 'yes'],
    [{ Variable: '$.n', NumericGreaterThanEqualsPath: '$.other.n' }, 'yes'],
    [{ Variable: '$.b', BooleanEquals: true }, 'yes'],
    [{ Variable: '$.b', BooleanEqualsPath: '$.other.b' }, 'no'],
    [{ Variable: '$.t', TimestampEqualsPath: '$.other.t' }, 'yes'],
    [{ Variable: '$.t', TimestampLessThanPath: '$.other.t' }, 'no'],
    [{ Variable: '$.t', TimestampGreaterThanPath: '$.other.t' }, 'no'],
    [{ Variable: '$.t', TimestampLessThanEqualsPath: '$.other.t' }, 'yes'],
    [{ Variable: '$.t', TimestampGreaterThanEqualsPath: '$.other.t' }, 'yes'],
  ])('%j → %s', async (rule, expected) => {
    expect(await holds(rule, INPUT)).toBe(expected);
  });

  it.each([
    [{ Variable: '$.nul', IsNull: true }, 'yes'],
    [{ Variable: '$.s', IsNull: true }, 'no'],
    [{ Variable: '$.missing', IsPresent: false }, 'yes'],
    [{ Variable: '$.nul', IsPresent: true }, 'yes'],
    [{ Variable: '$.n', IsNumeric: true }, 'yes'],
    [{ Variable: '$.s', IsNumeric: false }, 'yes'],
    [{ Variable: '$.s', IsString: true }, 'yes'],
    [{ Variable: '$.b', IsBoolean: true }, 'yes'],
    [{ Variable: '$.t', IsTimestamp: true }, 'yes'],
    [{ Variable: '$.s', IsTimestamp: true }, 'no'],
    [{ Variable: '$.arr', IsString: false }, 'yes'],
  ])('type test %j → %s', async (rule, expected) => {
    expect(await holds(rule, INPUT)).toBe(expected);
  });

  it('is false when the types differ: a number is no string, a string no timestamp, a boolean no number', async () => {
    expect(await holds({ Variable: '$.n', StringEquals: '5' }, INPUT)).toBe('no');
    expect(await holds({ Variable: '$.s', TimestampEquals: '2026-03-01T12:00:00Z' }, INPUT)).toBe('no');
    expect(await holds({ Variable: '$.b', NumericEquals: 1 }, INPUT)).toBe('no');
    expect(await holds({ Variable: '$.s', NumericEqualsPath: '$.s' }, INPUT)).toBe('no');
  });

  it('combines with And, Or and Not', async () => {
    const and = { And: [{ Variable: '$.n', NumericGreaterThan: 1 }, { Variable: '$.s', StringEquals: 'beta' }] };
    expect(await holds(and, INPUT)).toBe('yes');
    expect(await holds({ Not: and }, INPUT)).toBe('no');
    expect(await holds({ Or: [{ Variable: '$.n', NumericLessThan: 1 }, { Not: { Variable: '$.b', BooleanEquals: false } }] }, INPUT)).toBe('yes');
    // Pipeline.ts's "more work?": And of IsPresent and BooleanEquals.
    const again = { And: [{ Variable: '$.result.again', IsPresent: true }, { Variable: '$.result.again', BooleanEquals: true }] };
    expect(await holds(again, { result: { again: true } })).toBe('yes');
    expect(await holds(again, { result: {} })).toBe('no');
  });

  it('matches StringMatches wildcards, with \\* a literal star', () => {
    expect(stringMatches('log-2026.txt', 'log-*.txt')).toBe(true);
    expect(stringMatches('log-2026.csv', 'log-*.txt')).toBe(false);
    expect(stringMatches('a*b', 'a\\*b')).toBe(true);
    expect(stringMatches('axb', 'a\\*b')).toBe(false);
    expect(stringMatches('', '*')).toBe(true);
  });

  it('fails with States.Runtime when the Variable is absent, and with States.NoChoiceMatched without a Default', async () => {
    await expect(holds({ Variable: '$.missing', StringEquals: 'x' }, INPUT)).rejects.toThrow(/States.Runtime: Invalid path "\$.missing"/);
    await expect(holds({ Variable: '$.s', StringEqualsPath: '$.missing' }, INPUT)).rejects.toThrow(/States.Runtime/);
    const def = { StartAt: 'C', States: { C: { Type: 'Choice', Choices: [{ Variable: '$.n', NumericEquals: 0, Next: 'E' }] }, E: { Type: 'Succeed' } } };
    expect((await run(def, INPUT)).result).toMatchObject({ status: 'FAILED', error: 'States.NoChoiceMatched' });
  });

  it('passes its input on, through InputPath and OutputPath', async () => {
    const def = {
      StartAt: 'C',
      States: { C: { Type: 'Choice', InputPath: '$.other', OutputPath: '$.s', Choices: [{ Variable: '$.b', BooleanEquals: false, Next: 'E' }] }, E: { Type: 'Succeed' } },
    };
    expect((await run(def, INPUT)).result).toEqual({ status: 'SUCCEEDED', output: 'alpha' });
  });
});
