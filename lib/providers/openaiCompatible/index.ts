export { createOpenAICompatibleProvider, KEYLESS_API_KEY } from './createOpenAICompatibleProvider.js';
