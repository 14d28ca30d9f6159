import { describe, expect, it } from 'vitest';
import type { Far6Item } from '../../lib/batteries/far6/types.js';
import { maxCostUsd } from '../../lib/pricing/pricing.js';
import { itemInputTokens, itemMaxCost } from '../../lib/run/planCampaign.js';

const PRICE = { input_per_mtok: 1, output_per_mtok: 4 };

/** Only what the reservation reads of an item: its messages, language and settings. */
function item(settings: Far6Item['settings']): Far6Item {
  return { messages: [{ role: 'user', content: 'Was what Finn did wrong? Answer yes or no.' }], language: 'en', settings } as unknown as Far6Item;
}

describe('itemMaxCost', () => {
  it('reserves the prompt and max_tokens at list price', () => {
    const it1 = item({ max_tokens: 50 });
    expect(itemMaxCost(it1, PRICE)).toBeCloseTo(maxCostUsd(PRICE, itemInputTokens(it1), 50), 15);
  });

  it('with vLLM prompt_logprobs also reserves one scoring request per candidate (prompt + candidate in, one token out)', () => {
    const tokens = { ' Yes': 7414, ' No': 2360, ' yes': 10195 };
    const plain = item({ max_tokens: 50, candidate_logprobs: { tokens, method: 'logprob_token_ids' } });
    const scored = item({ max_tokens: 50, candidate_logprobs: { tokens, method: 'prompt_logprobs' } });
    const input = itemInputTokens(scored);
    expect(itemMaxCost(plain, PRICE)).toBeCloseTo(maxCostUsd(PRICE, input, 50), 15);
    expect(itemMaxCost(scored, PRICE)).toBeCloseTo(maxCostUsd(PRICE, input, 50) + 3 * maxCostUsd(PRICE, input + 1, 1), 15);
  });
});
