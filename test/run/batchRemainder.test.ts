import { describe, expect, it } from 'vitest';
import { ANTHROPIC_BATCH_LIMITS, BEDROCK_BATCH_LIMITS, batchLimitsOf } from '../../lib/providers/batchLimits.js';
import { itemsBelowBatchMinimum } from '../../lib/run/batchRemainder.js';

// The items of a partition a batch run asks synchronously (at the on-demand price), as the plan
// prices them: fewer than the provider's minimum per batch, or the last piece of a split under it.

describe('itemsBelowBatchMinimum', () => {
  it.each([
    [0, 0],
    [1, 1],
    [99, 99],
    [100, 0],
    [50_000, 0],
    [50_030, 30],
    [50_099, 99],
    [50_100, 0],
    [100_050, 50],
  ])('Bedrock (at least 100 records, at most 50,000 a job): %i items → %i asked synchronously', (n, sync) => {
    expect(itemsBelowBatchMinimum(n, BEDROCK_BATCH_LIMITS)).toBe(sync);
  });

  it('a provider without a minimum, or without a batch API, asks nothing synchronously', () => {
    expect(itemsBelowBatchMinimum(3, ANTHROPIC_BATCH_LIMITS)).toBe(0);
    expect(itemsBelowBatchMinimum(3, batchLimitsOf('openai-compatible'))).toBe(0);
    expect(batchLimitsOf('bedrock')).toBe(BEDROCK_BATCH_LIMITS);
  });
});
