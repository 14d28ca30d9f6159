import type { ModelProvider } from '../types.js';
import type { ProviderContext, ProviderEntry } from '../entry.js';
import { connectionOptions, rateLimitHintsOption } from '../connectionOptions.js';
import { OpenAIChatProvider } from './OpenAIChatProvider.js';
import { OpenAIBatchClient } from './OpenAIBatchClient.js';
import type { BatchClient } from '../batchTypes.js';

/** The key variable when a campaign names none (the `openai` SDK's own default). */
export const OPENAI_API_KEY_ENV = 'OPENAI_API_KEY';

/** Registry factory for `provider: openai`: chat completions on OpenAI's API, or on `base_url` when given. */
export function createOpenAIProvider(entry: ProviderEntry, ctx: ProviderContext): ModelProvider {
  return new OpenAIChatProvider({
    ...connectionOptions(entry, ctx, OPENAI_API_KEY_ENV),
    flavour: 'openai',
    ...rateLimitHintsOption(`openai/${entry.model}`, ctx),
  });
}

/** Registry factory for `provider: openai` with `mode: batch`: the Batch API on chat completions. */
export function createOpenAIBatchClient(entry: ProviderEntry, ctx: ProviderContext): BatchClient {
  return new OpenAIBatchClient(connectionOptions(entry, ctx, OPENAI_API_KEY_ENV));
}
