import type { ModelProvider } from '../types.js';
import type { ProviderContext, ProviderEntry } from '../entry.js';
import { resolveApiKey } from '../apiKey.js';
import { AnthropicMessagesProvider } from './AnthropicMessagesProvider.js';
import { AnthropicBatchClient } from './AnthropicBatchClient.js';
import type { BatchClient } from '../batchTypes.js';

/** The key variable when a campaign names none (the SDK's own default). */
export const ANTHROPIC_API_KEY_ENV = 'ANTHROPIC_API_KEY';

/** Registry factory for `provider: anthropic`: the Messages API, or a server at `base_url` that speaks it. */
export function createAnthropicProvider(entry: ProviderEntry, ctx: ProviderContext): ModelProvider {
  const apiKey = resolveApiKey(entry, ctx, ANTHROPIC_API_KEY_ENV);
  const id = `anthropic/${entry.model}`;
  const onHints = ctx.onRateLimitHints;
  return new AnthropicMessagesProvider({
    model: entry.model,
    apiKey,
    ...(entry.base_url !== undefined ? { baseURL: entry.base_url } : {}),
    ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}),
    ...(onHints ? { onRateLimitHints: (h) => onHints(id, h) } : {}),
  });
}

/** Registry factory for `provider: anthropic` with `mode: batch`: Message Batches. */
export function createAnthropicBatchClient(entry: ProviderEntry, ctx: ProviderContext): BatchClient {
  return new AnthropicBatchClient({
    model: entry.model,
    apiKey: resolveApiKey(entry, ctx, ANTHROPIC_API_KEY_ENV),
    ...(entry.base_url !== undefined ? { baseURL: entry.base_url } : {}),
    ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}),
  });
}
