export { SimulatedProvider } from './SimulatedProvider.js';
export { createSimulatedProvider } from './createSimulatedProvider.js';
export { classifySimulatedError } from './classifySimulatedError.js';
export { CallEffects } from './CallEffects.js';
export { approximateTokens, approximateTokensOf, truncateToTokens } from './approximateTokens.js';
export type { ConfigLocation, SimulatedEntry, SimulatedModel, SimulatedReply, SimulatorFactory } from './types.js';
