export type * from './types.js';
export { createProvider, KNOWN_PROVIDERS } from './registry.js';
export * from './pricing.js';
export type { ProviderEntry, ProviderContext } from './registry.js';
export { SimulatedTransientError, SimulatedRequestError, UnknownProviderError } from './errors.js';
export * from './simulated/index.js';
