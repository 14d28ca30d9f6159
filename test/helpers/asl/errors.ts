/**
 * The three ways an execution of the test interpreter goes wrong, kept apart because a test must
 * tell them apart: a StatesError is what Step Functions itself would report (Retry and Catch see
 * it); an UnsupportedAslError is a construct this interpreter does not implement (never passed
 * over: the test cannot vouch for what it did not run); an AslDefinitionError is a definition Step
 * Functions would refuse at CreateStateMachine.
 */

/**
 * An error with a Step Functions error name. Terminal errors (States.Runtime,
 * States.DataLimitExceeded) fail the execution at once: the service documents that no Retry or
 * Catch, States.ALL included, handles them.
 */
export class StatesError extends Error {
  readonly error: string;
  readonly causeText: string;
  readonly terminal: boolean;

  constructor(error: string, cause: string, options: { readonly terminal?: boolean } = {}) {
    super(`${error}: ${cause}`);
    this.name = 'StatesError';
    this.error = error;
    this.causeText = cause;
    this.terminal = options.terminal ?? false;
  }
}

/** States.Runtime: a path that does not resolve, a value of the wrong type where the language needs one. */
export function runtimeError(cause: string): StatesError {
  return new StatesError('States.Runtime', cause, { terminal: true });
}

/** A construct the interpreter refuses, naming the state (when known) and what it is. */
export class UnsupportedAslError extends Error {
  readonly state: string | undefined;
  readonly detail: string;

  constructor(detail: string, state?: string) {
    super(state === undefined ? `unsupported by the test ASL interpreter: ${detail}` : `state ${JSON.stringify(state)}: unsupported by the test ASL interpreter: ${detail}`);
    this.name = 'UnsupportedAslError';
    this.state = state;
    this.detail = detail;
  }

  /** The same error, naming `state` if it named none. */
  at(state: string): UnsupportedAslError {
    return this.state === undefined ? new UnsupportedAslError(this.detail, state) : this;
  }
}

/** A definition Step Functions would reject (a Next to no state, a missing required field). */
export class AslDefinitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AslDefinitionError';
  }
}
