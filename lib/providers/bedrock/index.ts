export { BedrockConverseProvider, awsClientConfig } from './BedrockConverseProvider.js';
export type { BedrockConnection } from './BedrockConverseProvider.js';
export { BedrockBatchClient, BEDROCK_BATCH_LIMITS, BEDROCK_BATCH_MIN_RECORDS, fromBatchRecord, recordIdOf, toBatchRecord } from './BedrockBatchClient.js';
export type { BedrockBatchClientOptions, BedrockBatchSettings } from './BedrockBatchClient.js';
export { bedrockConnection, createBedrockBatchClient, createBedrockProvider } from './createBedrockProvider.js';
export { fromWireResponse, settingsSent, toWireRequest } from './converseWire.js';
export type { ConverseWireRequest } from './converseWire.js';
export { toBedrockCallError } from './bedrockErrors.js';
