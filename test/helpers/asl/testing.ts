/** Small helpers for the interpreter's own tests: a one-function Lambda map and a quick run. */
import { startExecution } from './interpreter.js';
import type { ExecutionOptions, ExecutionRecord } from './interpreter.js';
import type { AslStates, Integrations, Json, LambdaFunction } from './types.js';

export const FN = 'arn:aws:lambda:us-east-1:123456789012:function:fn';
export const FN2 = 'arn:aws:lambda:us-east-1:123456789012:function:fn2';

/**
 * Runs `definition` with Lambda functions by ARN and any other integrations. asl-validator is off
 * unless asked (it takes ~150 ms a definition, and these tests run hundreds); the interpreter's
 * own checkDefinition always runs, and validation.test.ts runs asl-validator over every shape.
 */
export function run(definition: AslStates, input: Json, lambda: Record<string, LambdaFunction> = {}, options: Partial<ExecutionOptions> & { integrations?: Integrations } = {}): Promise<ExecutionRecord> {
  return startExecution(definition, input, { validate: false, ...options, integrations: { ...options.integrations, lambda } });
}

/** A definition of one state that ends. */
export function single(state: Record<string, unknown>): AslStates {
  return { StartAt: 'S', States: { S: { ...state, ...(['Choice', 'Succeed', 'Fail'].includes(String(state.Type)) ? {} : { End: true }) } as never } };
}

/** The output of a succeeded execution (a failed one throws, naming its error and cause). */
export function outputOf<T = Json>(record: ExecutionRecord): T {
  if (record.result.status !== 'SUCCEEDED') throw new Error(`the execution failed: ${record.result.error}: ${record.result.cause}`);
  return record.result.output as T;
}
