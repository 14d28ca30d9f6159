import { resolveApiKey } from './apiKey.js';
import type { ProviderContext, ProviderEntry } from './entry.js';
import type { RateLimitHints } from './rateLimits.js';

/**
 * The options every SDK-backed adapter and batch client takes from a model entry: the model, the
 * key (from the variable the entry names, or `defaultEnv`), and `base_url` and the timeout where
 * set. One place, so that a new adapter cannot forget the timeout or read the key another way.
 *
 * @example
 * new OpenAIBatchClient(connectionOptions(entry, ctx, OPENAI_API_KEY_ENV));
 */
export function connectionOptions(
  entry: ProviderEntry,
  ctx: ProviderContext,
  defaultEnv: string,
): { model: string; apiKey: string; baseURL?: string; timeoutMs?: number } {
  return {
    model: entry.model,
    apiKey: resolveApiKey(entry, ctx, defaultEnv),
    ...(entry.base_url !== undefined ? { baseURL: entry.base_url } : {}),
    ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}),
  };
}

/** The rate-limit hints callback of a provider `id`, where the run asked for hints. */
export function rateLimitHintsOption(id: string, ctx: ProviderContext): { onRateLimitHints?: (h: RateLimitHints) => void } {
  const onHints = ctx.onRateLimitHints;
  return onHints ? { onRateLimitHints: (h) => onHints(id, h) } : {};
}
