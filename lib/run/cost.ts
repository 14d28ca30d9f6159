/** What one item may cost: what the plan prices and what the budget reserves before each call. */
import type { PromptItem } from '../core/types.js';
import { estimatePromptTokens, maxCostUsd } from '../pricing/pricing.js';
import type { Price } from '../providers/types.js';

/** Input tokens of an item's messages by the documented per-script estimate, chat overhead included. */
export function itemInputTokens(item: PromptItem): number {
  return estimatePromptTokens(item.messages, item.language);
}

/**
 * Per-call reservation for an item under a price: prompt tokens + max_tokens at list price. With
 * vLLM's `prompt_logprobs` candidate method a call is the reply plus one scoring request per
 * candidate (the prompt again, one token out), all paid: the reservation covers them too.
 */
export function itemMaxCost(item: PromptItem, price: Price): number {
  const input = itemInputTokens(item);
  const reply = maxCostUsd(price, input, item.settings.max_tokens ?? 1024);
  const scoring = item.settings.candidate_logprobs?.method === 'prompt_logprobs' ? Object.keys(item.settings.candidate_logprobs.tokens).length : 0;
  return reply + scoring * maxCostUsd(price, input + 1, 1);
}
