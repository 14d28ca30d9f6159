export { OPENAI_BASE_URL, OpenAIChatProvider, fromWireResponse, settingsSent, toWireRequest } from './OpenAIChatProvider.js';
export type { ChatFlavour, OpenAIChatProviderOptions } from './OpenAIChatProvider.js';
export { createOpenAIBatchClient, createOpenAIProvider, OPENAI_API_KEY_ENV } from './createOpenAIProvider.js';
export { OPENAI_BATCH_LIMITS, OpenAIBatchClient, completeResults, parseBatchOutput, toBatchLine } from './OpenAIBatchClient.js';
export type { OpenAIBatchClientOptions } from './OpenAIBatchClient.js';
