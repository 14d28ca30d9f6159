import { describe, expect, it } from 'vitest';
import { ProviderCallError } from '../../lib/providers/errors.js';
import { groupFailure, type GroupAnswer } from '../../lib/providers/openai/scoringGroup.js';

// A call of several requests (a reply and its candidate-scoring requests) of which one failed: the
// error carries what the answered requests used, priced as the answered group would have been.

const answered = (usage: GroupAnswer['usage']): PromiseSettledResult<GroupAnswer> => ({ status: 'fulfilled', value: { usage } });
const failed = (err: unknown): PromiseRejectedResult => ({ status: 'rejected', reason: err });

describe('the error of a scoring group with a failed request', () => {
  it('sums what every answered request used, its cached prompt tokens included', () => {
    const timeout = new ProviderCallError('timed out', 'vllm/m', 'timeout', true, undefined, undefined, { possiblyBilled: true });
    const err = groupFailure([answered({ input_tokens: 100, output_tokens: 8, cached_input_tokens: 60 }), answered({ input_tokens: 30, output_tokens: 1 }), failed(timeout)], 'vllm/m');

    expect(err).toBeInstanceOf(ProviderCallError);
    const e = err as ProviderCallError;
    expect(e.usage).toEqual({ input_tokens: 130, output_tokens: 9, cached_input_tokens: 60 });
    expect(e.possiblyBilled).toBe(true);
    expect(e.message).toContain("2 of the call's 3 requests were answered and are billed");
  });

  it('leaves cached tokens out when no answered request reported any, and is undefined when none failed', () => {
    const refused = new ProviderCallError('bad request', 'vllm/m', 'bad_request', false, 400);
    const e = groupFailure([answered({ input_tokens: 10, output_tokens: 2 }), failed(refused)], 'vllm/m') as ProviderCallError;
    expect(e.usage).toEqual({ input_tokens: 10, output_tokens: 2 });
    expect(groupFailure([answered({ input_tokens: 1, output_tokens: 1 })], 'vllm/m')).toBeUndefined();
  });
});
