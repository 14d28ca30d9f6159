import { describe, expect, it } from 'vitest';
import { SondageError } from '../../lib/errors.js';
import {
  assertSafeSegment,
  campaignPrefix,
  manifestKey,
  parsePartKey,
  partKey,
  partitionPrefix,
  planKey,
  resultsKey,
  tablePrefix,
} from '../../lib/store/index.js';

describe('layout', () => {
  it('builds the hive-partitioned keys of DESIGN.md', () => {
    expect(campaignPrefix('far6-demo')).toBe('campaigns/far6-demo/');
    expect(tablePrefix('far6-demo', 'generate', 'replies')).toBe('campaigns/far6-demo/generate/replies/');
    expect(partitionPrefix('far6-demo', 'generate', 'replies', 'gpt-4o_mini.v2', 'ja')).toBe(
      'campaigns/far6-demo/generate/replies/model=gpt-4o_mini.v2/language=ja/',
    );
    expect(partKey('c', 'judge', 'readings', 'alpha', 'de', 'part-0001.parquet')).toBe(
      'campaigns/c/judge/readings/model=alpha/language=de/part-0001.parquet',
    );
    expect(planKey('c')).toBe('campaigns/c/plan.json');
    expect(manifestKey('c')).toBe('campaigns/c/manifest.json');
    expect(resultsKey('c', 'tables/shares.csv')).toBe('campaigns/c/results/tables/shares.csv');
  });

  it.each([
    ['campaign', () => campaignPrefix('a/b')],
    ['campaign', () => campaignPrefix('..')],
    ['campaign', () => campaignPrefix('')],
    ['campaign', () => campaignPrefix('démo')],
    ['model', () => partitionPrefix('c', 'g', 'replies', 'openai/gpt-4o', 'en')],
    ['model', () => partitionPrefix('c', 'g', 'replies', 'm=1', 'en')],
    ['model', () => partitionPrefix('c', 'g', 'replies', 'with space', 'en')],
    ['phase', () => tablePrefix('c', 'x/y', 'replies')],
    ['results file', () => resultsKey('c', '../escape.csv')],
  ])('rejects an unsafe %s id', (_what, build) => {
    expect(build).toThrow(SondageError);
    expect(build).toThrow(/not a safe path segment; use only letters, digits/);
  });

  it('names the bad value and what is allowed', () => {
    expect(() => assertSafeSegment('model id', 'openai/gpt')).toThrow(
      `model id "openai/gpt" is not a safe path segment; use only letters, digits, '.', '_' or '-'`,
    );
  });

  it('rejects unknown tables, what is not a language code, reserved phases and non-parquet part names', () => {
    expect(() => tablePrefix('c', 'g', 'answers' as 'replies')).toThrow(/not a campaign table; use one of prompts, replies, readings/);
    // Languages are data (each battery lists its own): any language code names a partition.
    expect(partitionPrefix('c', 'g', 'replies', 'm', 'th')).toBe('campaigns/c/g/replies/model=m/language=th/');
    expect(() => partitionPrefix('c', 'g', 'replies', 'm', 'English')).toThrow(/language "English" is not a language code/);
    expect(() => tablePrefix('c', 'input', 'replies')).toThrow(/reserved/);
    expect(() => tablePrefix('c', 'results', 'replies')).toThrow(/reserved/);
    expect(() => partKey('c', 'g', 'replies', 'm', 'en', 'part-1.csv')).toThrow(/must end in ".parquet"/);
    expect(() => partKey('c', 'g', 'replies', 'm', 'en', '.part-1.parquet')).toThrow(/not start with "."/);
  });

  it('parses a part key back, and only a part key', () => {
    const key = partKey('c', 'generate', 'prompts', 'beta', 'ko', 'part-7.parquet');
    expect(parsePartKey(key)).toEqual({
      campaign: 'c',
      phase: 'generate',
      table: 'prompts',
      model: 'beta',
      language: 'ko',
      partName: 'part-7.parquet',
    });
    expect(parsePartKey('campaigns/c/plan.json')).toBeUndefined();
    expect(parsePartKey('campaigns/c/g/answers/model=m/language=en/p.parquet')).toBeUndefined();
    expect(parsePartKey('campaigns/c/g/replies/model=m/language=x_y/p.parquet')).toBeUndefined();
  });
});
