/** What one item may cost: what the plan prices and what the budget reserves before each call. */
import type { PromptItem } from '../core/types.js';
import { boundPromptTokens, estimatePromptTokens, maxCostUsd, utf8Bytes } from '../pricing/pricing.js';
import type { Price } from '../providers/types.js';

/** Input tokens of an item's messages by the documented per-script estimate, chat overhead included. */
export function itemInputTokens(item: PromptItem): number {
  return estimatePromptTokens(item.messages, item.language);
}

/**
 * Per-call reservation for an item under a price, a bound and not an estimate: the most prompt
 * tokens a byte-level tokenizer can count (`boundPromptTokens`: every UTF-8 byte, plus the chat
 * format's overhead) and `max_tokens` of output (or the thinking budget, where it is larger), at
 * list price. With vLLM's `prompt_logprobs` candidate method a call is the reply plus one scoring
 * request per candidate (the prompt again, one token out), all paid: the reservation covers them too.
 */
export function itemMaxCost(item: PromptItem, price: Price): number {
  const input = boundPromptTokens(item.messages);
  const thinking = typeof item.settings.thinking === 'object' ? item.settings.thinking.budget_tokens : 0;
  const reply = maxCostUsd(price, input, Math.max(item.settings.max_tokens ?? 1024, thinking));
  const candidates = item.settings.candidate_logprobs?.method === 'prompt_logprobs' ? Object.keys(item.settings.candidate_logprobs.tokens) : [];
  return candidates.reduce((sum, c) => sum + maxCostUsd(price, input + utf8Bytes(c), 1), reply);
}
