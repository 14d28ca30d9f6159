import { describe, expect, it } from 'vitest';
import { isShard, PHASE_NAME } from '../../lib/config/pipeline.js';

const shard = { phase: 'generate', model: 'm-1', language: 'de', start: 0, end: 10, mode: 'sync' } as const;

describe('isShard: a Shard as the Lambda worker\'s event and the GPU manifest carry it', () => {
  it('takes a whole shard, an empty slice and both modes', () => {
    expect(isShard(shard)).toBe(true);
    expect(isShard({ ...shard, start: 4, end: 4 })).toBe(true);
    expect(isShard({ ...shard, mode: 'batch' })).toBe(true);
  });

  it.each([
    ['null', null],
    ['a missing phase', { ...shard, phase: undefined }],
    ['a numeric model', { ...shard, model: 1 }],
    ['a missing language', { ...shard, language: undefined }],
    ['a fractional start', { ...shard, start: 0.5 }],
    ['a negative start', { ...shard, start: -1 }],
    ['end before start', { ...shard, start: 5, end: 4 }],
    ['an unknown mode', { ...shard, mode: 'stream' }],
  ])('refuses %s', (_what, value) => {
    expect(isShard(value)).toBe(false);
  });

  it('PHASE_NAME takes the names batteries give their phases and refuses a path', () => {
    expect(['generate', 'judge_audit', 'read-2'].every((p) => PHASE_NAME.test(p))).toBe(true);
    expect(['Generate', '../x', '2read', ''].some((p) => PHASE_NAME.test(p))).toBe(false);
  });
});
