/**
 * A test interpreter of the Amazon States Language (JSONPath query language), run in-process: the
 * definition exactly as `cdk synth` writes it, the services it calls plugged in (integrations).
 * It follows states-language.net and the Step Functions developer guide where they define
 * behaviour:
 *
 * - input and output processing in the documented order: InputPath → Parameters → (the task) →
 *   ResultSelector → ResultPath (applied to the state's raw input) → OutputPath; `null` paths
 *   give `{}` (InputPath, OutputPath) or keep the raw input (ResultPath);
 * - Retry (first matching Retrier, its own attempt count, delays recorded not slept) and Catch
 *   (`{ Error, Cause }` at the Catcher's ResultPath); States.Runtime and States.DataLimitExceeded
 *   end the execution whatever the Retriers and Catchers say;
 * - every value that crosses a state boundary is serialised: a state never sees another's objects;
 *   a state's input after Parameters and its output may not exceed 256 KiB (States.DataLimitExceeded);
 * - Wait records the time it would wait and goes on; a hook lets a test act "during" it;
 * - the number of state transitions of one execution is bounded (Standard workflows have a hard
 *   quota on history events), so a loop that never ends fails instead of hanging the test.
 *
 * Everything the interpreter does not implement is refused before the first state runs
 * (checkDefinition), naming the state.
 */
import { randomUUID } from 'node:crypto';
import aslValidator from 'asl-validator';
import { checkDefinition } from './checkDefinition.js';
import { evaluateRule } from './choiceRules.js';
import { AslDefinitionError, runtimeError, StatesError, UnsupportedAslError } from './errors.js';
import { readPath, requirePath, writeResultPath } from './jsonPath.js';
import { runMap } from './mapState.js';
import { checkPayloadSize, roundTrip } from './payloadLimits.js';
import { evaluateExpression, renderTemplate } from './payloadTemplate.js';
import { findCatcher, RetryCounter } from './retryCatch.js';
import type { Catcher, Retrier } from './retryCatch.js';
import { integrationOf, runTaskResource } from './taskResources.js';
import type { AslState, AslStates, ContextObject, ExecutionIdentity, ExecutionResult, HistoryEvent, Integrations, Json } from './types.js';

/** Transitions one execution may make before the interpreter calls it a loop (Standard: 25,000 history events). */
export const DEFAULT_MAX_TRANSITIONS = 25_000;

export interface ExecutionOptions {
  readonly integrations: Integrations;
  /** Execution name (`$$.Execution.Name`); default a UUID. Must be a valid Step Functions name. */
  readonly name?: string;
  readonly stateMachineArn?: string;
  readonly roleArn?: string;
  readonly maxTransitions?: number;
  /** Called at each Wait instead of sleeping (a test may change the world "meanwhile"). */
  readonly onWait?: (wait: { readonly state: string; readonly path: string; readonly seconds?: number; readonly timestamp?: string }) => void | Promise<void>;
  /** Run asl-validator on the definition first (default true). */
  readonly validate?: boolean;
}

export interface ExecutionRecord {
  readonly arn: string;
  readonly name: string;
  readonly result: ExecutionResult;
  readonly history: readonly HistoryEvent[];
}

/** What a nested run (a Parallel branch, a Map iteration or child execution) inherits. */
export interface Scope {
  readonly identity: ExecutionIdentity;
  readonly executionArn: string;
  readonly executionInput: Json;
  readonly startTime: string;
  /** Where in the execution, for the history: `` at the top, `Map[3]/` inside a child. */
  readonly path: string;
  /** Counts transitions across one execution (children of a Distributed Map have their own). */
  readonly transitions: { count: number };
}

/** Characters Step Functions refuses in an execution name (StartExecution, InvalidName). */
const BAD_NAME = /[\s<>{}[\]?*"#%\\^|~`$&,;:/]/;

export function checkExecutionName(name: string): void {
  const control = [...name].some((c) => c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f));
  if (name.length < 1 || name.length > 80 || BAD_NAME.test(name) || control) {
    throw new AslDefinitionError(`InvalidName: ${JSON.stringify(name)} is not a valid execution name (1-80 characters, no whitespace, brackets, wildcards or punctuation such as : / , ; & $)`);
  }
}

export class Runner {
  readonly history: HistoryEvent[] = [];

  constructor(
    readonly options: ExecutionOptions,
    private readonly maxTransitions: number,
  ) {}

  record(event: HistoryEvent): void {
    this.history.push(event);
  }

  context(scope: Scope, state: string, retryCount: number, extra: Partial<Pick<ContextObject, 'Map'>> = {}): Json {
    const ctx: ContextObject = {
      Execution: { Id: scope.executionArn, Name: scope.identity.name, Input: scope.executionInput, StartTime: scope.startTime, RoleArn: scope.identity.roleArn, RedriveCount: 0 },
      StateMachine: { Id: scope.identity.stateMachineArn, Name: scope.identity.stateMachineArn.split(':').at(-1)! },
      State: { Name: state, EnteredTime: new Date().toISOString(), RetryCount: retryCount },
      ...extra,
    };
    return ctx as unknown as Json;
  }

  /** Runs a States object from StartAt to its end; the output, or a StatesError. */
  async runStates(machine: AslStates, input: Json, scope: Scope): Promise<Json> {
    let name = machine.StartAt;
    let data = roundTrip(input);
    for (;;) {
      if (++scope.transitions.count > this.maxTransitions) {
        throw runtimeError(`the execution made more than ${this.maxTransitions} state transitions (a loop that never ends?); last state ${JSON.stringify(name)}`);
      }
      const state = machine.States[name];
      if (!state) throw new AslDefinitionError(`no state named ${JSON.stringify(name)}`);
      const path = `${scope.path}${name}`;
      this.record({ type: 'StateEntered', state: name, path });
      let step: { output: Json; next?: string };
      try {
        step = await this.runState(name, state, data, scope);
      } catch (err) {
        if (err instanceof UnsupportedAslError) throw err.at(name);
        if (err instanceof StatesError) this.record({ type: 'StateFailed', state: name, path, error: err.error, cause: err.causeText });
        throw err;
      }
      checkPayloadSize(step.output, `the output of state ${JSON.stringify(name)}`);
      data = roundTrip(step.output);
      if (step.next === undefined) return data;
      name = step.next;
    }
  }

  private next(state: AslState): string | undefined {
    return state.End === true ? undefined : (state.Next as string);
  }

  /** One state: its output and the state to go to (none: the end of this States object). */
  private async runState(name: string, state: AslState, raw: Json, scope: Scope): Promise<{ output: Json; next?: string }> {
    switch (state.Type) {
      case 'Pass': {
        const ctx = this.context(scope, name, 0);
        let effective = inputPath(state, raw);
        if (state.Parameters !== undefined) effective = renderTemplate(state.Parameters, effective, ctx);
        const result = 'Result' in state ? (state.Result as Json) : effective;
        return { output: outputPath(state, resultPath(state, raw, result)), next: this.next(state) };
      }
      case 'Choice': {
        const ctx = this.context(scope, name, 0);
        const effective = inputPath(state, raw);
        const rule = (state.Choices as Record<string, unknown>[]).find((r) => evaluateRule(r, effective, ctx));
        const next = (rule?.Next ?? state.Default) as string | undefined;
        if (next === undefined) throw new StatesError('States.NoChoiceMatched', `no Choices rule of ${JSON.stringify(name)} matched and there is no Default`);
        return { output: outputPath(state, effective), next };
      }
      case 'Wait': {
        const effective = inputPath(state, raw);
        const wait: { seconds?: number; timestamp?: string } = {};
        if (state.Seconds !== undefined) wait.seconds = state.Seconds as number;
        else if (state.Timestamp !== undefined) wait.timestamp = state.Timestamp as string;
        else if (state.SecondsPath !== undefined) {
          const v = requirePath(effective, state.SecondsPath as string, 'SecondsPath');
          if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw runtimeError(`SecondsPath ${String(state.SecondsPath)} gives ${JSON.stringify(v)}, not a non-negative integer`);
          wait.seconds = v;
        } else {
          const v = requirePath(effective, state.TimestampPath as string, 'TimestampPath');
          if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) throw runtimeError(`TimestampPath ${String(state.TimestampPath)} gives ${JSON.stringify(v)}, not a timestamp`);
          wait.timestamp = v;
        }
        const path = `${scope.path}${name}`;
        this.record({ type: 'Waited', state: name, path, ...wait });
        await this.options.onWait?.({ state: name, path, ...wait });
        return { output: outputPath(state, effective), next: this.next(state) };
      }
      case 'Succeed':
        return { output: outputPath(state, inputPath(state, raw)) };
      case 'Fail': {
        const ctx = this.context(scope, name, 0);
        const text = (field: 'Error' | 'Cause'): string => {
          if (state[field] !== undefined) return String(state[field]);
          if (state[`${field}Path`] === undefined) return '';
          const v = evaluateExpression(String(state[`${field}Path`]), raw, ctx, `${field}Path`);
          if (typeof v !== 'string') throw runtimeError(`${field}Path of ${JSON.stringify(name)} gives ${JSON.stringify(v)}, not a string`);
          return v;
        };
        throw new StatesError(text('Error'), text('Cause'));
      }
      case 'Task':
      case 'Parallel':
      case 'Map':
        return this.withRetryCatch(name, state, raw, scope);
      default:
        throw new UnsupportedAslError(`state type ${JSON.stringify(state.Type)}`);
    }
  }

  /** Task, Parallel and Map: the work, retried and caught as the state's Retry and Catch say. */
  private async withRetryCatch(name: string, state: AslState, raw: Json, scope: Scope): Promise<{ output: Json; next?: string }> {
    const counter = new RetryCounter((state.Retry ?? []) as Retrier[]);
    const path = `${scope.path}${name}`;
    for (;;) {
      try {
        const result = await this.work(name, state, raw, scope, counter.total);
        return { output: outputPath(state, resultPath(state, raw, result)), next: this.next(state) };
      } catch (err) {
        if (!(err instanceof StatesError)) throw err;
        const retry = counter.next(err);
        if (retry) {
          this.record({ type: 'Retried', state: name, path, error: err.error, attempt: retry.attempt, delaySeconds: retry.delaySeconds, jitter: retry.jitter });
          continue;
        }
        const catcher: Catcher | undefined = findCatcher(state.Catch as Catcher[] | undefined, err);
        if (!catcher) throw err;
        this.record({ type: 'Caught', state: name, path, error: err.error, next: catcher.Next });
        const failure: Json = { Error: err.error, Cause: err.causeText };
        const output = catcher.ResultPath === null ? raw : writeResultPath(raw, catcher.ResultPath ?? '$', failure);
        return { output, next: catcher.Next };
      }
    }
  }

  /** The result of a Task, Parallel or Map, after ResultSelector. */
  private async work(name: string, state: AslState, raw: Json, scope: Scope, retryCount: number): Promise<Json> {
    const ctx = this.context(scope, name, retryCount);
    const path = `${scope.path}${name}`;
    let result: Json;
    if (state.Type === 'Map') {
      result = await runMap(this, name, state, inputPath(state, raw), scope, retryCount);
    } else {
      let effective = inputPath(state, raw);
      if (state.Parameters !== undefined) effective = renderTemplate(state.Parameters, effective, ctx);
      checkPayloadSize(effective, `the input of state ${JSON.stringify(name)} after Parameters`);
      effective = roundTrip(effective);
      if (state.Type === 'Task') {
        const resource = String(state.Resource);
        this.record({ type: 'TaskScheduled', state: name, path, resource, input: effective });
        result = await runTaskResource(integrationOf(resource), effective, this.options.integrations, { state: name, path, resource, execution: scope.identity, retryCount });
      } else {
        result = await this.runBranches(name, state, effective, scope);
      }
    }
    checkPayloadSize(result, `the result of state ${JSON.stringify(name)}`);
    return state.ResultSelector === undefined ? result : renderTemplate(state.ResultSelector, roundTrip(result), ctx, 'ResultSelector');
  }

  /** Parallel: every branch on the same input, side by side; the array of their outputs, or the first branch's error. */
  private async runBranches(name: string, state: AslState, input: Json, scope: Scope): Promise<Json> {
    const branches = state.Branches as AslStates[];
    const settled = await Promise.allSettled(branches.map((b, i) => this.runStates(b, input, { ...scope, path: `${scope.path}${name}#${i}/` })));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<Json>).value);
  }
}

export function inputPath(state: AslState, raw: Json): Json {
  if (state.InputPath === null) return {};
  if (state.InputPath === undefined) return raw;
  return requirePath(raw, state.InputPath as string, 'InputPath');
}

export function outputPath(state: AslState, out: Json): Json {
  if (state.OutputPath === null) return {};
  if (state.OutputPath === undefined) return out;
  const { found, value } = readPath(out, state.OutputPath as string);
  if (!found) throw runtimeError(`Unable to apply OutputPath ${JSON.stringify(state.OutputPath)} to the output ${JSON.stringify(out).slice(0, 400)}`);
  return value!;
}

function resultPath(state: AslState, raw: Json, result: Json): Json {
  if (state.ResultPath === null) return raw;
  return writeResultPath(raw, (state.ResultPath as string | undefined) ?? '$', result);
}

/** Definitions asl-validator accepted, by text (it takes ~150 ms a call; a test runs one definition many times). */
const validated = new Set<string>();

function validateOnce(definition: AslStates): void {
  const text = JSON.stringify(definition);
  if (validated.has(text)) return;
  // asl-validator writes into what it validates: hand it a copy.
  const result = aslValidator(JSON.parse(text));
  if (!result.isValid) throw new AslDefinitionError(`asl-validator refuses the definition: ${result.errorsText('; ')}`);
  validated.add(text);
}

/**
 * Starts an execution of `definition` on `input` and runs it to its end.
 * @example
 * const run = await startExecution(definition, { campaign: 'demo' }, { integrations: { lambda: { [planArn]: plan } } });
 * expect(run.result.status).toBe('SUCCEEDED');
 */
export async function startExecution(definition: AslStates, input: Json, options: ExecutionOptions): Promise<ExecutionRecord> {
  if (options.validate ?? true) validateOnce(definition);
  checkDefinition(definition);
  const name = options.name ?? randomUUID();
  checkExecutionName(name);
  const stateMachineArn = options.stateMachineArn ?? 'arn:aws:states:us-east-1:123456789012:stateMachine:test';
  const arn = `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
  const identity: ExecutionIdentity = { stateMachineArn, name, roleArn: options.roleArn ?? 'arn:aws:iam::123456789012:role/test' };
  const runner = new Runner(options, options.maxTransitions ?? DEFAULT_MAX_TRANSITIONS);
  let result: ExecutionResult;
  try {
    checkPayloadSize(input, 'the execution input');
    const scope: Scope = { identity, executionArn: arn, executionInput: roundTrip(input), startTime: new Date().toISOString(), path: '', transitions: { count: 0 } };
    const output = await runner.runStates(definition, input, scope);
    result = { status: 'SUCCEEDED', output };
  } catch (err) {
    if (!(err instanceof StatesError)) throw err;
    result = { status: 'FAILED', error: err.error, cause: err.causeText };
  }
  return { arn, name, result, history: runner.history };
}
