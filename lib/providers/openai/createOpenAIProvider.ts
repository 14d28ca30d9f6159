import type { ModelProvider } from '../types.js';
import type { ProviderContext, ProviderEntry } from '../entry.js';
import { resolveApiKey } from '../apiKey.js';
import { OpenAIChatProvider } from './OpenAIChatProvider.js';
import { OpenAIBatchClient } from './OpenAIBatchClient.js';
import type { BatchClient } from '../batchTypes.js';

/** The key variable when a campaign names none (the `openai` SDK's own default). */
export const OPENAI_API_KEY_ENV = 'OPENAI_API_KEY';

/** Registry factory for `provider: openai`: chat completions on OpenAI's API, or on `base_url` when given. */
export function createOpenAIProvider(entry: ProviderEntry, ctx: ProviderContext): ModelProvider {
  const apiKey = resolveApiKey(entry, ctx, OPENAI_API_KEY_ENV);
  const id = `openai/${entry.model}`;
  const onHints = ctx.onRateLimitHints;
  return new OpenAIChatProvider({
    model: entry.model,
    apiKey,
    flavour: 'openai',
    ...(entry.base_url !== undefined ? { baseURL: entry.base_url } : {}),
    ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}),
    ...(onHints ? { onRateLimitHints: (h) => onHints(id, h) } : {}),
  });
}

/** Registry factory for `provider: openai` with `mode: batch`: the Batch API on chat completions. */
export function createOpenAIBatchClient(entry: ProviderEntry, ctx: ProviderContext): BatchClient {
  return new OpenAIBatchClient({
    model: entry.model,
    apiKey: resolveApiKey(entry, ctx, OPENAI_API_KEY_ENV),
    ...(entry.base_url !== undefined ? { baseURL: entry.base_url } : {}),
    ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}),
  });
}
