import type { ModelProvider } from './types.js';
import { UnknownProviderError } from './errors.js';

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
  /** `judge` for the sentence judge; respondents by default. */
  readonly role?: 'respondent' | 'judge';
}

export interface ProviderContext {
  /** Campaign seed. */
  readonly seed: number;
  /** Campaign file, named in configuration errors. */
  readonly file?: string;
}

type ProviderFactory = (entry: ProviderEntry, ctx: ProviderContext) => ModelProvider;

/**
 * Provider name → lazy factory, so that a run loads only the adapters its campaign uses
 * (STYLE.md "Providers", after promptfoo's registry).
 */
const FACTORIES: Readonly<Record<string, () => Promise<ProviderFactory>>> = {
  simulated: async () => (await import('./simulated/createSimulatedProvider.js')).createSimulatedProvider,
};

/** The provider names a campaign may use. */
export const KNOWN_PROVIDERS: readonly string[] = Object.keys(FACTORIES).sort();

/**
 * Builds the provider for a campaign model entry.
 * @example const p = await createProvider({ id: 'alpha', provider: 'simulated', model: 'alpha' }, { seed: 7 });
 * @throws UnknownProviderError when the provider name is not known (the message lists the known ones);
 *   CampaignFileError when the entry's settings are invalid.
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
