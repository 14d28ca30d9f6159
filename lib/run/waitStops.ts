import { formatDuration } from './CallWatch.js';
import { onAbort } from './sleep.js';

/** The part of a run's StopState (stopState.ts) that the wait stops fill. */
export interface WaitStopState {
  /**
   * keyScope → message, for providers that asked to wait longer than the run's `maxWaitMs`: no
   * partition of that scope starts a new call; its items stay pending.
   */
  waitStops?: Map<string, string>;
  /** keyScope → the controller that aborts that scope's waiting calls (scopeSignal). */
  scopeAborts?: Map<string, AbortController>;
  /** How the message says to resume, where not by running the same command again (the Lambda worker: `sondage start --aws`). */
  readonly resumeWith?: string;
}

/**
 * The signal of one key scope's calls (see keyScope): aborted when the run is, or when the
 * provider asked that scope to wait longer than the run waits (noteWaitStop). Calls queued behind
 * the model's rate limit, or asleep before a retry, then end at once and leave their items
 * pending, rather than sit out the provider's pause.
 */
export function scopeSignal(stop: WaitStopState, scope: string, run: AbortSignal | undefined): AbortSignal {
  const controllers = (stop.scopeAborts ??= new Map<string, AbortController>());
  let controller = controllers.get(scope);
  if (controller === undefined) {
    const c = new AbortController();
    controller = c;
    controllers.set(scope, c);
    if (run?.aborted) c.abort(run.reason);
    else if (run !== undefined) onAbort(run, () => c.abort(run.reason));
  }
  return controller.signal;
}

/**
 * Records that a provider asked to wait `waitMs` (Retry-After) before its next call, past the run's
 * ceiling `maxWaitMs`: the calls of that scope stop, its unanswered items stay pending, and the
 * message says when to resume. Once per scope, for every partition of the run.
 */
export function noteWaitStop(
  stop: WaitStopState,
  scope: string,
  at: { readonly providerId: string; readonly phase: string; readonly endpoint?: string | undefined },
  waitMs: number,
  maxWaitMs: number,
  now: number = Date.now(),
): void {
  const stops = (stop.waitStops ??= new Map<string, string>());
  if (!stops.has(scope)) {
    const resume = new Date(now + waitMs).toISOString().replace(/\.\d+Z$/, 'Z');
    const where = at.endpoint !== undefined ? ` at ${at.endpoint}` : '';
    stops.set(
      scope,
      `${at.providerId}: the provider asked to wait ${formatDuration(waitMs)} before the next call (Retry-After)${where}, ` +
        `longer than the ${formatDuration(maxWaitMs)} a ${stop.resumeWith === undefined ? 'run waits (--max-wait SECONDS)' : 'worker waits'}; the ${at.phase} calls of this model stopped, ` +
        `what was collected is kept and its unanswered items stay pending. ${stop.resumeWith === undefined ? 'Run the same command again' : `Run ${stop.resumeWith}`} after ${resume} to resume.`,
    );
  }
  stop.scopeAborts?.get(scope)?.abort(new Error('the provider asked for a longer wait than the run allows'));
}
