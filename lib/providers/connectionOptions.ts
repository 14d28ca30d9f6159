import { resolveApiKey } from './apiKey.js';
import { attemptTimeoutMs, sdkTimeoutMs } from './attemptTimeouts.js';
import type { ProviderContext, ProviderEntry } from './entry.js';
import type { RateLimitHints } from './rateLimits.js';

/**
 * The options every SDK-backed adapter and batch client takes from a model entry: the model, the
 * key (from the variable the entry names, or `defaultEnv`), `base_url` where set, and the SDK's
 * timeout above the entry's attempt timeout. One place, so that a new adapter cannot forget the
 * timeout or read the key another way.
 *
 * @example
 * new OpenAIBatchClient(connectionOptions(entry, ctx, OPENAI_API_KEY_ENV));
 */
export function connectionOptions(
  entry: ProviderEntry,
  ctx: ProviderContext,
  defaultEnv: string,
): { model: string; apiKey: string; baseURL?: string; timeoutMs: number } {
  return {
    model: entry.model,
    apiKey: resolveApiKey(entry, ctx, defaultEnv),
    ...(entry.base_url !== undefined ? { baseURL: entry.base_url } : {}),
    timeoutMs: sdkTimeoutOf(entry, ctx),
  };
}

/**
 * The SDK's request timeout for a model entry: the context's when given, else a little above the
 * entry's attempt timeout (`timeout_s`, the default when absent), so that the run's own timeout,
 * which records the attempt as possibly billed, fires first.
 */
export function sdkTimeoutOf(entry: Pick<ProviderEntry, 'timeout_s'>, ctx: Pick<ProviderContext, 'timeoutMs'>): number {
  return ctx.timeoutMs ?? sdkTimeoutMs(attemptTimeoutMs(entry.timeout_s));
}

/** The rate-limit hints callback of a provider `id`, where the run asked for hints. */
export function rateLimitHintsOption(id: string, ctx: ProviderContext): { onRateLimitHints?: (h: RateLimitHints) => void } {
  const onHints = ctx.onRateLimitHints;
  return onHints ? { onRateLimitHints: (h) => onHints(id, h) } : {};
}
