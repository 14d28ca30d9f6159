import type { ModelProvider } from './types.js';
import type { RateLimitHints } from './rateLimits.js';
import type { BatchClient } from './batchTypes.js';
import { UnknownProviderError } from './errors.js';
import type { SimulatorFactory } from './simulated/types.js';

/** What the registry needs from a campaign's model (or judge) entry. */
export interface ProviderEntry {
  /** Campaign model id. */
  readonly id: string;
  /** Provider name, e.g. `simulated`. */
  readonly provider: string;
  /** The provider's model name. */
  readonly model: string;
  /** The entry's `simulation:` block (simulated provider only). */
  readonly simulation?: unknown;
  /** `subject` for a model under test (the default), or the battery's role the entry plays (`judge`). */
  readonly role?: string;
  /** Where the entry sits in the campaign file (`judge.audit.second_judge`), named in its configuration errors. */
  readonly simulationPath?: string;
  /** Real providers: the API's base URL (required for `openai-compatible`). */
  readonly base_url?: string;
  /** Real providers: the environment variable holding the API key; never the key itself. */
  readonly api_key_env?: string;
}

export interface ProviderContext {
  /** Campaign seed. */
  readonly seed: number;
  /** Campaign file, named in configuration errors. */
  readonly file?: string;
  /** Where API keys are read; `process.env` when absent (tests pass their own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Receives the rate-limit headers of every real provider response, keyed by provider id
   * (`openai/gpt-4.1-mini`), for lib/run/RateLimiter.ts to refine its buckets.
   */
  readonly onRateLimitHints?: (providerId: string, hints: RateLimitHints) => void;
  /** Real providers: the SDK's own per-request timeout, a backstop behind callWithRetry's. */
  readonly timeoutMs?: number;
  /** Simulated models: the campaign's battery builds them (lib/battery `Battery.simulator`). */
  readonly simulator?: SimulatorFactory;
}

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
  const load = Object.hasOwn(FACTORIES, entry.provider) ? FACTORIES[entry.provider] : undefined;
  if (load === undefined) {
    const where = ctx.file === undefined ? '' : `${ctx.file}: `;
    throw new UnknownProviderError(
      `${where}model "${entry.id}": provider "${entry.provider}" is not a known provider; use one of ${KNOWN_PROVIDERS.join(', ')}`,
      entry.provider,
      KNOWN_PROVIDERS,
    );
  }
  return (await load())(entry, ctx);
}

type BatchFactory = (entry: ProviderEntry, ctx: ProviderContext) => BatchClient;

/** Providers with a batch API, loaded lazily like the synchronous adapters. */
const BATCH_FACTORIES: Readonly<Record<string, () => Promise<BatchFactory>>> = {
  openai: async () => (await import('./openai/createOpenAIProvider.js')).createOpenAIBatchClient,
  anthropic: async () => (await import('./anthropic/createAnthropicProvider.js')).createAnthropicBatchClient,
};

/** The provider names that take `mode: batch`. */
export const BATCH_PROVIDERS: readonly string[] = Object.keys(BATCH_FACTORIES).sort();

/**
 * Builds the batch-API client for a campaign model entry with `mode: batch`.
 * @throws UnknownProviderError when the provider has no batch API (the message lists those that do);
 *   CampaignFileError when its API key variable is not set.
 */
export async function createBatchClient(entry: ProviderEntry, ctx: ProviderContext): Promise<BatchClient> {
  const load = Object.hasOwn(BATCH_FACTORIES, entry.provider) ? BATCH_FACTORIES[entry.provider] : undefined;
  if (load === undefined) {
    const where = ctx.file === undefined ? '' : `${ctx.file}: `;
    throw new UnknownProviderError(
      `${where}model "${entry.id}": provider "${entry.provider}" has no batch API; use mode: sync, or one of ${BATCH_PROVIDERS.join(', ')}`,
      entry.provider,
      BATCH_PROVIDERS,
    );
  }
  return (await load())(entry, ctx);
}
