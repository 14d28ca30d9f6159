/** What one item may cost: what the plan prices and what the budget reserves before each call. */
import type { PromptItem } from '../core/types.js';
import { boundPromptTokens, estimatePromptTokens, maxCostUsd } from '../pricing/pricing.js';
import type { Price } from '../providers/types.js';

/** Input tokens of an item's messages by the documented per-script estimate, chat overhead included. */
export function itemInputTokens(item: PromptItem): number {
  return estimatePromptTokens(item.messages, item.language);
}

/**
 * Per-call reservation for an item under a price: a bound, not an estimate — the prompt's UTF-8
 * bytes with the chat overhead (`boundPromptTokens`, what any byte-level tokenizer can count at
 * most) + max_tokens, at list price. A thinking budget needs nothing more: Anthropic counts
 * thinking inside `max_tokens` (the adapter refuses a budget not below it), and so do OpenAI's
 * `max_completion_tokens` and vLLM's `max_tokens`. With vLLM's `prompt_logprobs` candidate method a
 * call is the reply plus one scoring request per candidate (the prompt again with the candidate as
 * an assistant message, one token out), all paid: the reservation covers them too.
 */
export function itemMaxCost(item: PromptItem, price: Price): number {
  const input = boundPromptTokens(item.messages);
  const reply = maxCostUsd(price, input, item.settings.max_tokens ?? 1024);
  const candidates = item.settings.candidate_logprobs;
  if (candidates?.method !== 'prompt_logprobs') return reply;
  let scoring = 0;
  for (const surface of Object.keys(candidates.tokens)) scoring += maxCostUsd(price, input + boundPromptTokens([{ role: 'assistant', content: surface }]), 1);
  return reply + scoring;
}
