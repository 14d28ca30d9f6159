import type { ModelProvider } from '../types.js';
import type { ProviderContext, ProviderEntry } from '../entry.js';
import { CampaignFileError, formatIssues } from '../../errors.js';
import { entryPath, resolveApiKey } from '../apiKey.js';
import { sdkTimeoutOf } from '../connectionOptions.js';
import { OpenAIChatProvider } from '../openai/OpenAIChatProvider.js';

/**
 * What a keyless local server (vLLM, Ollama) is sent when the campaign names no `api_key_env`:
 * the SDK requires a key, and vLLM's documentation uses this one.
 */
export const KEYLESS_API_KEY = 'EMPTY';

/**
 * Registry factory for `provider: openai-compatible`: any server that speaks OpenAI's chat
 * completions at `base_url` (vLLM, Ollama, Together, OpenRouter, Gemini's and Mistral's
 * compatibility endpoints). A new vendor is a campaign entry: base URL and key variable.
 */
export function createOpenAICompatibleProvider(entry: ProviderEntry, ctx: ProviderContext): ModelProvider {
  if (entry.base_url === undefined) {
    const issues = [{ file: ctx.file ?? '(campaign)', path: `${entryPath(entry)}.base_url`, message: "is required for provider openai-compatible; the server's URL, e.g. http://localhost:8000/v1" }];
    throw new CampaignFileError(formatIssues(issues), issues);
  }
  const apiKey = entry.api_key_env === undefined ? KEYLESS_API_KEY : resolveApiKey(entry, ctx, undefined);
  const id = `openai-compatible/${entry.model}`;
  const onHints = ctx.onRateLimitHints;
  return new OpenAIChatProvider({
    model: entry.model,
    apiKey,
    baseURL: entry.base_url,
    flavour: 'openai-compatible',
    timeoutMs: sdkTimeoutOf(entry, ctx),
    ...(onHints ? { onRateLimitHints: (h) => onHints(id, h) } : {}),
  });
}
