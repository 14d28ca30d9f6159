import { getEventListeners } from 'node:events';

/** The signal of one provider call: aborted when the run is, or when the call's time is up. */
export interface CallSignal {
  readonly signal: AbortSignal;
  /** Whether the time ran out (not the run aborted). */
  timedOut(): boolean;
  /** Clears the timer and the listener on the run's signal once the call has settled. */
  dispose(): void;
}

/**
 * The calls in flight under each run signal: one listener per run signal aborts them all, rather
 * than one listener per call (hundreds at a high concurrency: a MaxListenersExceededWarning).
 */
const inFlight = new WeakMap<AbortSignal, Set<AbortController>>();

function callsUnder(run: AbortSignal): Set<AbortController> {
  let calls = inFlight.get(run);
  if (calls === undefined) {
    const set = new Set<AbortController>();
    inFlight.set(run, (calls = set));
    run.addEventListener('abort', () => {
      for (const c of set) c.abort(run.reason);
      set.clear();
    }, { once: true });
  }
  return calls;
}

/**
 * Controllers of settled calls that nothing aborted and nothing listens to any more, for the next
 * calls of this thread: a new AbortController was 2–3 % of a partition thread's time with fast
 * models (its EventTarget set-up; CPU profile). One whose signal still has a listener (a
 * provider that left one, as some SDKs do) is never handed out again.
 */
const spare: AbortController[] = [];
const SPARE_MAX = 4096;

/**
 * `AbortSignal.any([run, AbortSignal.timeout(ms)])` without either: both build weak references
 * and a dependent-signal registry per call, ~7 % of a partition thread's time with fast models
 * (CPU profile of a FAR-6 run). One controller and one timer (unreferenced, as
 * AbortSignal.timeout's) per call do the same, and are freed as soon as the call settles.
 */
export function callSignal(run: AbortSignal | undefined, timeoutMs: number): CallSignal {
  const controller = spare.pop() ?? new AbortController();
  let expired = false;
  let disposed = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, timeoutMs);
  timer.unref();
  const calls = run === undefined ? undefined : callsUnder(run);
  if (run?.aborted) controller.abort(run.reason);
  else calls?.add(controller);
  return {
    signal: controller.signal,
    timedOut: () => expired,
    dispose() {
      if (disposed) return;
      disposed = true;
      clearTimeout(timer);
      calls?.delete(controller);
      if (!controller.signal.aborted && spare.length < SPARE_MAX && getEventListeners(controller.signal, 'abort').length === 0) spare.push(controller);
    },
  };
}
