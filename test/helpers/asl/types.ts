/**
 * The shapes the test interpreter of the Amazon States Language works on: a definition as `cdk
 * synth` writes it (JSONPath query language only), what an execution reports, and the integrations
 * a test plugs in for the services the definition calls. Values are plain JSON: every value that
 * crosses a state boundary is serialised and parsed again, as Step Functions does.
 */

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** One state, as written in the definition (fields are checked by checkDefinition). */
export interface AslState {
  readonly Type: string;
  readonly [field: string]: unknown;
}

/** A state machine, or the states of a Parallel branch or a Map item processor. */
export interface AslStates {
  readonly StartAt: string;
  readonly States: Readonly<Record<string, AslState>>;
  readonly Comment?: string;
  readonly Version?: string;
  readonly TimeoutSeconds?: number;
  readonly QueryLanguage?: string;
  /** An ItemProcessor's mode and execution type. */
  readonly ProcessorConfig?: { readonly Mode?: string; readonly ExecutionType?: string };
}

/** How an execution ended. */
export type ExecutionResult =
  | { readonly status: 'SUCCEEDED'; readonly output: Json }
  | { readonly status: 'FAILED'; readonly error: string; readonly cause: string };

/** What happened, in order: the assertions of a test read it instead of logs. */
export type HistoryEvent =
  | { readonly type: 'StateEntered'; readonly state: string; readonly path: string }
  | { readonly type: 'StateFailed'; readonly state: string; readonly path: string; readonly error: string; readonly cause: string }
  | { readonly type: 'Retried'; readonly state: string; readonly path: string; readonly error: string; readonly attempt: number; readonly delaySeconds: number; readonly jitter: 'FULL' | 'NONE' }
  | { readonly type: 'Caught'; readonly state: string; readonly path: string; readonly error: string; readonly next: string }
  | { readonly type: 'Waited'; readonly state: string; readonly path: string; readonly seconds?: number; readonly timestamp?: string }
  | { readonly type: 'TaskScheduled'; readonly state: string; readonly path: string; readonly resource: string; readonly input: Json }
  | { readonly type: 'MapRunEnded'; readonly state: string; readonly path: string; readonly items: number; readonly children: number; readonly failedItems: number; readonly status: 'SUCCEEDED' | 'FAILED' };

/** The context object (`$$`) of a state: what `$$.Execution.Name` and friends read. */
export interface ContextObject {
  readonly Execution: { readonly Id: string; readonly Name: string; readonly Input: Json; readonly StartTime: string; readonly RoleArn: string; readonly RedriveCount: number };
  readonly StateMachine: { readonly Id: string; readonly Name: string };
  readonly State: { readonly Name: string; readonly EnteredTime: string; readonly RetryCount: number };
  readonly Map?: { readonly Item: { readonly Index: number; readonly Value: Json } };
}

/** Who runs the execution: names, for the context object. */
export interface ExecutionIdentity {
  readonly stateMachineArn: string;
  readonly name: string;
  readonly roleArn: string;
}

/** What an integration is told about the call besides its parameters. */
export interface TaskCall {
  /** The state's name, and its place in nested executions (`Map[3]/Run a batch`). */
  readonly state: string;
  readonly path: string;
  readonly resource: string;
  readonly execution: ExecutionIdentity;
  /** 0 for the first attempt, then 1, 2 … for the Retry attempts. */
  readonly retryCount: number;
}

/** A Lambda function as the interpreter calls it: the payload after a JSON round trip, its return value JSON-serialisable. */
export type LambdaFunction = (payload: Json, call: TaskCall) => Promise<unknown>;

/** Objects of S3 as the Distributed Map's ItemReader and ResultWriter see them. */
export interface S3Access {
  getObject(bucket: string, key: string): Promise<Uint8Array | undefined>;
  putObject(bucket: string, key: string, body: string): Promise<void>;
}

/**
 * The services a definition calls, plugged in by the test. An integration throws a StatesError for
 * a failure the state machine sees (its name is what Retry and Catch match); any other exception
 * is a fault of the test itself and ends the run with it.
 */
export interface Integrations {
  /** Lambda functions by unqualified function ARN (and by name, for `lambda:invoke`'s FunctionName). */
  readonly lambda?: Readonly<Record<string, LambdaFunction>>;
  /** `arn:aws:states:::athena:startQueryExecution.sync`: StartQueryExecution with the parameters, waited on; returns GetQueryExecution's output. */
  readonly athenaStartQueryExecutionSync?: (parameters: Json, call: TaskCall) => Promise<Json>;
  /** `arn:aws:states:::batch:submitJob.sync`: SubmitJob with the parameters, waited on; returns the job as DescribeJobs gives it. */
  readonly batchSubmitJobSync?: (parameters: Json, call: TaskCall) => Promise<Json>;
  /** The Distributed Map's ItemReader (`s3:getObject`) and ResultWriter (`s3:putObject`). */
  readonly s3?: S3Access;
}
