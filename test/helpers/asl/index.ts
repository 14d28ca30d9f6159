/** The test interpreter of the Amazon States Language: run a synthesized definition with stand-in services. */
export { AslDefinitionError, StatesError, UnsupportedAslError } from './errors.js';
export { checkDefinition } from './checkDefinition.js';
export { resolveTemplateValue, stateMachineOf } from './cloudFormation.js';
export type { CloudFormationNames, SynthesizedStateMachine } from './cloudFormation.js';
export { checkExecutionName, DEFAULT_MAX_TRANSITIONS, startExecution } from './interpreter.js';
export { PAYLOAD_LIMIT_BYTES } from './payloadLimits.js';
export type { ExecutionOptions, ExecutionRecord } from './interpreter.js';
export type { AslState, AslStates, ContextObject, ExecutionResult, HistoryEvent, Integrations, Json, JsonObject, LambdaFunction, S3Access, TaskCall } from './types.js';
