/**
 * The Task resources the interpreter runs, and how each answers (Step Functions developer guide,
 * "Integrating services"): a Lambda function ARN (the function's return value is the result), the
 * optimized `lambda:invoke` (the result wraps it as `Payload` with the invoke's metadata), and the
 * `.sync` ("run a job") forms of Athena StartQueryExecution and Batch SubmitJob, each answered by
 * an integration the test plugs in. Every other resource — activities, `.waitForTaskToken`, other
 * services — is refused by name.
 */
import { randomUUID } from 'node:crypto';
import { StatesError, UnsupportedAslError } from './errors.js';
import type { Integrations, Json, TaskCall } from './types.js';

export type TaskResource =
  | { readonly kind: 'lambdaFunction'; readonly functionArn: string }
  | { readonly kind: 'lambdaInvoke' }
  | { readonly kind: 'athenaStartQueryExecutionSync' }
  | { readonly kind: 'batchSubmitJobSync' };

const LAMBDA_ARN = /^(arn:[\w-]+:lambda:[\w-]+:\d{12}:function:[\w-]+)(?::([\w$-]+))?$/;
const OPTIMIZED: Readonly<Record<string, TaskResource['kind']>> = {
  'lambda:invoke': 'lambdaInvoke',
  'athena:startQueryExecution.sync': 'athenaStartQueryExecutionSync',
  'batch:submitJob.sync': 'batchSubmitJobSync',
};

/** What a Resource ARN calls; throws UnsupportedAslError for the ones not implemented. */
export function integrationOf(resource: string): TaskResource {
  const lambda = LAMBDA_ARN.exec(resource);
  if (lambda) return { kind: 'lambdaFunction', functionArn: lambda[1]! };
  const m = /^arn:[\w-]+:states:::(.+)$/.exec(resource);
  const kind = m ? OPTIMIZED[m[1]!] : undefined;
  if (!kind) throw new UnsupportedAslError(`Task Resource ${JSON.stringify(resource)} (implemented: a Lambda function ARN, ${Object.keys(OPTIMIZED).map((k) => `arn:aws:states:::${k}`).join(', ')})`);
  return { kind } as TaskResource;
}

/** A function's exception as Step Functions reports it: the error type as name, Lambda's error JSON as cause. */
export function lambdaFailure(err: unknown): StatesError {
  if (err instanceof StatesError) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  const errorType = e.name || 'Error';
  const trace = (e.stack ?? '').split('\n');
  return new StatesError(errorType, JSON.stringify({ errorType, errorMessage: e.message, trace }));
}

function lambdaArnOf(name: string): string {
  const m = LAMBDA_ARN.exec(name);
  return m ? m[1]! : name;
}

function serialised(value: unknown, what: string): Json {
  if (value === undefined) return null;
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new StatesError('Runtime.MarshalError', `${what} is not JSON: ${(err as Error).message}`);
  }
  return JSON.parse(text) as Json;
}

async function callLambda(integrations: Integrations, functionArn: string, payload: Json, call: TaskCall): Promise<Json> {
  const fn = integrations.lambda?.[functionArn];
  if (!fn) throw new UnsupportedAslError(`no Lambda function plugged in for ${functionArn} (known: ${Object.keys(integrations.lambda ?? {}).join(', ') || 'none'})`);
  let out: unknown;
  try {
    // Lambda hands the function a parsed copy of the JSON it was sent, never the caller's object.
    out = await fn(JSON.parse(JSON.stringify(payload)) as Json, call);
  } catch (err) {
    throw lambdaFailure(err);
  }
  return serialised(out, `the response of ${functionArn}`);
}

/** Runs a Task's resource with its effective parameters; the result before ResultSelector. */
export async function runTaskResource(resource: TaskResource, parameters: Json, integrations: Integrations, call: TaskCall): Promise<Json> {
  switch (resource.kind) {
    case 'lambdaFunction':
      return callLambda(integrations, resource.functionArn, parameters, call);
    case 'lambdaInvoke': {
      const p = parameters as Record<string, Json>;
      if (typeof p?.FunctionName !== 'string') throw new StatesError('States.Runtime', 'lambda:invoke needs Parameters.FunctionName', { terminal: true });
      for (const k of Object.keys(p)) {
        if (!['FunctionName', 'Payload', 'Qualifier', 'InvocationType'].includes(k)) throw new UnsupportedAslError(`lambda:invoke parameter ${k}`);
      }
      if (p.InvocationType !== undefined && p.InvocationType !== 'RequestResponse') throw new UnsupportedAslError(`lambda:invoke InvocationType ${JSON.stringify(p.InvocationType)}`);
      if (!('Payload' in p)) throw new UnsupportedAslError('lambda:invoke without Payload (give Payload or Payload.$ explicitly)');
      const payload = await callLambda(integrations, lambdaArnOf(p.FunctionName), p.Payload!, call);
      const requestId = randomUUID();
      return {
        ExecutedVersion: '$LATEST',
        Payload: payload,
        SdkHttpMetadata: { HttpHeaders: { 'X-Amz-Executed-Version': '$LATEST', 'x-amzn-RequestId': requestId }, HttpStatusCode: 200 },
        SdkResponseMetadata: { RequestId: requestId },
        StatusCode: 200,
      };
    }
    case 'athenaStartQueryExecutionSync': {
      const run = integrations.athenaStartQueryExecutionSync;
      if (!run) throw new UnsupportedAslError('athena:startQueryExecution.sync is called but no athenaStartQueryExecutionSync integration is plugged in');
      return serialised(await run(parameters, call), 'the Athena integration result');
    }
    case 'batchSubmitJobSync': {
      const run = integrations.batchSubmitJobSync;
      if (!run) throw new UnsupportedAslError('batch:submitJob.sync is called but no batchSubmitJobSync integration is plugged in');
      return serialised(await run(parameters, call), 'the Batch integration result');
    }
  }
}
