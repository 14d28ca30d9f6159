export { OpenAIChatProvider, fromWireResponse, settingsSent, toWireRequest } from './OpenAIChatProvider.js';
export type { ChatFlavour, OpenAIChatProviderOptions } from './OpenAIChatProvider.js';
export { createOpenAIProvider, OPENAI_API_KEY_ENV } from './createOpenAIProvider.js';
