import type { ModelProvider } from '../types.js';
import type { ProviderContext, ProviderEntry } from '../entry.js';
import { connectionOptions, rateLimitHintsOption } from '../connectionOptions.js';
import { AnthropicMessagesProvider } from './AnthropicMessagesProvider.js';
import { AnthropicBatchClient } from './AnthropicBatchClient.js';
import type { BatchClient } from '../batchTypes.js';

/** The key variable when a campaign names none (the SDK's own default). */
export const ANTHROPIC_API_KEY_ENV = 'ANTHROPIC_API_KEY';

/** Registry factory for `provider: anthropic`: the Messages API, or a server at `base_url` that speaks it. */
export function createAnthropicProvider(entry: ProviderEntry, ctx: ProviderContext): ModelProvider {
  return new AnthropicMessagesProvider({
    ...connectionOptions(entry, ctx, ANTHROPIC_API_KEY_ENV),
    ...rateLimitHintsOption(`anthropic/${entry.model}`, ctx),
  });
}

/** Registry factory for `provider: anthropic` with `mode: batch`: Message Batches. */
export function createAnthropicBatchClient(entry: ProviderEntry, ctx: ProviderContext): BatchClient {
  return new AnthropicBatchClient(connectionOptions(entry, ctx, ANTHROPIC_API_KEY_ENV));
}
