export { AnthropicMessagesProvider, ANTHROPIC_DEFAULT_MAX_TOKENS, fromWireResponse, settingsSent, toWireRequest } from './AnthropicMessagesProvider.js';
export type { AnthropicMessagesProviderOptions, MessagesWireRequest } from './AnthropicMessagesProvider.js';
export { createAnthropicBatchClient, createAnthropicProvider, ANTHROPIC_API_KEY_ENV } from './createAnthropicProvider.js';
export { ANTHROPIC_BATCH_LIMITS, AnthropicBatchClient, fromBatchResult, toBatchRequest } from './AnthropicBatchClient.js';
export type { AnthropicBatchClientOptions } from './AnthropicBatchClient.js';
