import type { GenerationSettings } from '../core/types.js';

/**
 * What a provider can return beyond text, declared beside the provider names (schemas.ts
 * PROVIDERS) so that the campaign parser and the plan can read it without loading an adapter.
 * Providers that cannot return token log-probabilities, and why, in the words a refusal uses. A
 * phase read from logprobs (P(True)'s verify) on one of these would store replies its reader can
 * never read, so the plan refuses it (lib/run/context.ts) before anything is spent.
 */
const NO_LOGPROBS: Readonly<Record<string, string>> = {
  bedrock: 'Bedrock Converse returns no token log-probabilities',
  // The Messages API has no logprobs parameter and no logprobs in its response (Messages reference).
  anthropic: 'the Anthropic Messages API returns no token log-probabilities',
};

/** Why `provider` cannot return logprobs, or undefined when it can. */
export function logprobsUnsupported(provider: string): string | undefined {
  return Object.hasOwn(NO_LOGPROBS, provider) ? NO_LOGPROBS[provider] : undefined;
}

/** Whether settings ask for token log-probabilities in any form. */
export function asksForLogprobs(s: GenerationSettings): boolean {
  return s.logprobs === true || (s.top_logprobs ?? 0) > 0 || s.candidate_logprobs !== undefined;
}
