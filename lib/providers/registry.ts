import type { ModelProvider } from './types.js';
import type { ProviderContext, ProviderEntry } from './entry.js';
import type { BatchClient } from './batchTypes.js';
import { UnknownProviderError } from './errors.js';

type ProviderFactory = (entry: ProviderEntry, ctx: ProviderContext) => ModelProvider;

/**
 * Provider name → lazy factory, so that a run loads only the adapters its campaign uses
 * (STYLE.md "Providers", after promptfoo's registry).
 */
const FACTORIES: Readonly<Record<string, () => Promise<ProviderFactory>>> = {
  simulated: async () => (await import('./simulated/createSimulatedProvider.js')).createSimulatedProvider,
  openai: async () => (await import('./openai/createOpenAIProvider.js')).createOpenAIProvider,
  anthropic: async () => (await import('./anthropic/createAnthropicProvider.js')).createAnthropicProvider,
  'openai-compatible': async () => (await import('./openaiCompatible/createOpenAICompatibleProvider.js')).createOpenAICompatibleProvider,
  bedrock: async () => (await import('./bedrock/createBedrockProvider.js')).createBedrockProvider,
};

/** The provider names a campaign may use. */
export const KNOWN_PROVIDERS: readonly string[] = Object.keys(FACTORIES).sort();

/**
 * Builds the provider for a campaign model entry.
 * @example const p = await createProvider({ id: 'alpha', provider: 'simulated', model: 'alpha' }, { seed: 7 });
 * @throws UnknownProviderError when the provider name is not known (the message lists the known ones);
 *   CampaignFileError when the entry's settings are invalid or its API key variable is not set.
 */
export async function createProvider(entry: ProviderEntry, ctx: ProviderContext): Promise<ModelProvider> {
  const factory = await loadFactory(FACTORIES, KNOWN_PROVIDERS, entry, ctx, 'is not a known provider; use one of');
  return factory(entry, ctx);
}

type BatchFactory = (entry: ProviderEntry, ctx: ProviderContext) => BatchClient;

/** Providers with a batch API, loaded lazily like the synchronous adapters. */
// As FACTORIES: one literal lazy import per provider, so that only the SDK in use is loaded.
const BATCH_FACTORIES: Readonly<Record<string, () => Promise<BatchFactory>>> = {
  openai: async () => (await import('./openai/createOpenAIProvider.js')).createOpenAIBatchClient,
  anthropic: async () => (await import('./anthropic/createAnthropicProvider.js')).createAnthropicBatchClient,
  bedrock: async () => (await import('./bedrock/createBedrockProvider.js')).createBedrockBatchClient,
};

/** The provider names that take `mode: batch`. */
export const BATCH_PROVIDERS: readonly string[] = Object.keys(BATCH_FACTORIES).sort();

/**
 * Builds the batch-API client for a campaign model entry with `mode: batch`.
 * @throws UnknownProviderError when the provider has no batch API (the message lists those that do);
 *   CampaignFileError when its API key variable is not set.
 */
export async function createBatchClient(entry: ProviderEntry, ctx: ProviderContext): Promise<BatchClient> {
  const factory = await loadFactory(BATCH_FACTORIES, BATCH_PROVIDERS, entry, ctx, 'has no batch API; use mode: sync, or one of');
  return factory(entry, ctx);
}

/**
 * The factory that `entry.provider` names in `factories`, loaded. Otherwise an UnknownProviderError
 * naming the campaign file, the model, what is wrong (`problem`) and the names there are (`known`).
 */
async function loadFactory<F>(
  factories: Readonly<Record<string, () => Promise<F>>>,
  known: readonly string[],
  entry: ProviderEntry,
  ctx: ProviderContext,
  problem: string,
): Promise<F> {
  const load = Object.hasOwn(factories, entry.provider) ? factories[entry.provider] : undefined;
  if (load === undefined) {
    const where = ctx.file === undefined ? '' : `${ctx.file}: `;
    throw new UnknownProviderError(`${where}model "${entry.id}": provider "${entry.provider}" ${problem} ${known.join(', ')}`, entry.provider, known);
  }
  return load();
}
