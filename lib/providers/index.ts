export type * from './types.js';
export { BATCH_PROVIDERS, createBatchClient, createProvider, KNOWN_PROVIDERS } from './registry.js';
export type { ProviderEntry, ProviderContext } from './entry.js';
export { ProviderCallError, SimulatedTransientError, SimulatedRequestError, UnknownProviderError } from './errors.js';
export type { ProviderErrorClass } from './errors.js';
export { parseRateLimitHeaders, retryAfterMs } from './rateLimits.js';
export type { RateLimitHints } from './rateLimits.js';
export type * from './batchTypes.js';
export { splitBatch } from './splitBatch.js';
// The real adapters (./openai, ./anthropic, ./openaiCompatible, ./bedrock) are not re-exported here: the
// registry loads them lazily, so a run only imports the SDKs its campaign uses.
export * from './simulated/index.js';
