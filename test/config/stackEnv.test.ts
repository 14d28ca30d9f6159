import { describe, expect, it } from 'vitest';
import { parseGpuQueues } from '../../functions/plan/handler.js';
import { ENV } from '../../lib/config/index.js';
import { stackEnvJson } from '../../lib/config/stackEnv.js';
import { parseBedrockBatchEnv } from '../../lib/run/bedrockBatchChecks.js';

describe('stackEnvJson: an environment variable the stack sets as JSON', () => {
  it('reads the JSON; unset or empty is undefined', () => {
    expect(stackEnvJson('plan', 'X', '{"a":"b"}')).toEqual({ a: 'b' });
    expect(stackEnvJson('plan', 'X', 'null')).toBeNull();
    expect(stackEnvJson('plan', 'X', undefined)).toBeUndefined();
    expect(stackEnvJson('plan', 'X', '')).toBeUndefined();
  });

  it('text that is not JSON names the handler and the variable, with the parser\'s error as cause', () => {
    const err = (() => {
      try {
        return stackEnvJson('worker', 'SONDAGE_X', '{');
      } catch (e) {
        return e;
      }
    })() as Error;
    expect(err.message).toMatch(/^worker: SONDAGE_X is not JSON \(the stack sets it\): /);
    expect(err.cause).toBeInstanceOf(SyntaxError);
  });

  it.each([
    ['gpuQueues', (v: string | undefined) => parseGpuQueues(v), ENV.gpuQueues],
    ['bedrockBatch', (v: string | undefined) => parseBedrockBatchEnv(v), ENV.bedrockBatch],
  ] as const)('the plan reads ENV.%s through it', (_name, parse, variable) => {
    expect(parse(undefined)).toBeUndefined();
    expect(() => parse('{')).toThrow(`plan: ${variable} is not JSON (the stack sets it)`);
    expect(() => parse('null')).toThrow(`plan: ${variable} must`);
  });
});
