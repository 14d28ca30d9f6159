/**
 * A Step Functions server on 127.0.0.1 for the CLI's `start`/`status`/`stop --aws` tests: the JSON 1.0
 * protocol (`X-Amz-Target: AWSStepFunctions.*`) for StartExecution, DescribeExecution, StopExecution and
 * ListExecutions, nothing more. Executions never advance on their own: a test moves one with `finish`,
 * so every state the CLI reads is one the test set. Unknown operations answer 400 UnknownOperation,
 * so a CLI change that needs more fails loudly here.
 */
import { closeServer, createBodyServer, jsonBody, listenLocal, sendJson } from './localServer.js';

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

export interface FakeExecution {
  readonly executionArn: string;
  readonly stateMachineArn: string;
  readonly name: string;
  status: ExecutionStatus;
  /** Epoch seconds, as the service sends it. */
  readonly startDate: number;
  stopDate?: number;
  readonly input: string;
  error?: string;
  cause?: string;
}

export interface SfnServer {
  readonly url: string;
  /** Every execution, oldest first. */
  readonly executions: FakeExecution[];
  /** Requests served, by operation. */
  readonly calls: Map<string, number>;
  /** Executions per ListExecutions page (small in tests, so paging is exercised). */
  pageSize: number;
  /** Adds an execution as if started earlier (`startDate` in epoch seconds). */
  add(stateMachineArn: string, name: string, input: object, status?: ExecutionStatus, startDate?: number): FakeExecution;
  /** Ends a running execution. */
  finish(executionArn: string, status: Exclude<ExecutionStatus, 'RUNNING'>, error?: string, cause?: string): void;
  close(): Promise<void>;
}

class Failed extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startSfnServer(): Promise<SfnServer> {
  const executions: FakeExecution[] = [];
  const calls = new Map<string, number>();
  let clock = 1_790_000_000;
  const now = (): number => ++clock;

  const find = (arn: unknown): FakeExecution => {
    const e = executions.find((x) => x.executionArn === arn);
    if (!e) throw new Failed('ExecutionDoesNotExist', `Execution Does Not Exist: '${String(arn)}'`);
    return e;
  };
  const add = (stateMachineArn: string, name: string, input: object, status: ExecutionStatus = 'RUNNING', startDate = now()): FakeExecution => {
    const executionArn = `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
    if (executions.some((x) => x.executionArn === executionArn)) throw new Failed('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
    const e: FakeExecution = { executionArn, stateMachineArn, name, status, startDate, input: JSON.stringify(input) };
    if (status !== 'RUNNING') e.stopDate = startDate + 1;
    executions.push(e);
    return e;
  };
  const state = { pageSize: 100 };
  const finish: SfnServer['finish'] = (executionArn, status, error, cause) => {
    const e = find(executionArn);
    e.status = status;
    e.stopDate = now();
    if (error !== undefined) e.error = error;
    if (cause !== undefined) e.cause = cause;
  };

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    StartExecution(b) {
      if (typeof b.stateMachineArn !== 'string' || !b.stateMachineArn.includes(':stateMachine:')) {
        throw new Failed('InvalidArn', `Invalid Arn: '${String(b.stateMachineArn)}'`);
      }
      const name = typeof b.name === 'string' ? b.name : `exec-${executions.length + 1}`;
      if (!/^[A-Za-z0-9_.-]{1,80}$/.test(name)) throw new Failed('InvalidName', `Invalid Name: '${name}'`);
      let input: object;
      try {
        input = JSON.parse(typeof b.input === 'string' ? b.input : '{}') as object;
      } catch {
        throw new Failed('InvalidExecutionInput', 'Invalid execution input');
      }
      const e = add(b.stateMachineArn, name, input);
      return { executionArn: e.executionArn, startDate: e.startDate };
    },
    DescribeExecution(b) {
      const e = find(b.executionArn);
      return { ...e };
    },
    StopExecution(b) {
      const e = find(b.executionArn);
      // The service answers a stop of a finished execution without changing it.
      if (e.status === 'RUNNING') {
        e.status = 'ABORTED';
        e.stopDate = now();
        if (typeof b.error === 'string') e.error = b.error;
        if (typeof b.cause === 'string') e.cause = b.cause;
      }
      return { stopDate: e.stopDate };
    },
    ListExecutions(b) {
      const newestFirst = executions
        .filter((e) => e.stateMachineArn === b.stateMachineArn && (b.statusFilter === undefined || e.status === b.statusFilter))
        .reverse();
      const start = typeof b.nextToken === 'string' ? Number(b.nextToken) : 0;
      const size = Math.min(typeof b.maxResults === 'number' && b.maxResults > 0 ? b.maxResults : 100, state.pageSize);
      const page = newestFirst.slice(start, start + size);
      return {
        executions: page.map(({ input: _input, error: _error, cause: _cause, ...rest }) => rest),
        ...(start + size < newestFirst.length ? { nextToken: String(start + size) } : {}),
      };
    },
  };

  const server = createBodyServer((req, res, body) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const op = target.startsWith('AWSStepFunctions.') ? target.slice('AWSStepFunctions.'.length) : '';
    calls.set(op, (calls.get(op) ?? 0) + 1);
    const send = (status: number, payload: unknown): void => sendJson(res, status, payload, { 'content-type': 'application/x-amz-json-1.0' });
    try {
      const handler = operations[op];
      if (!handler) throw new Failed('UnknownOperationException', `operation ${JSON.stringify(target)} is not served by this fake`);
      send(200, handler(jsonBody(body)));
    } catch (err) {
      if (err instanceof Failed) send(400, { __type: err.type, message: err.message });
      else send(500, { __type: 'InternalFailure', message: String(err) });
    }
  });
  const { url } = await listenLocal(server);
  // The handle is the state the handlers read: a test sets pageSize on it and the next request obeys.
  return Object.assign(state, { url, executions, calls, add, finish, close: () => closeServer(server) });
}
