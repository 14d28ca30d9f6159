/**
 * Callbacks for the abort of a signal that many waiters share (the run's): one listener per
 * signal, whatever the number of waiters. A run at concurrency 256 has hundreds of calls waiting
 * on its signal at once — in a backoff sleep, in a rate limiter's queue — and one listener each
 * passed Node's limit of 10 (MaxListenersExceededWarning, a leak warning that was no leak).
 */
const waiters = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `fn` once when `signal` aborts; the returned function unregisters it. The signal carries
 * at most one listener of ours, however many are registered.
 * @example const off = onAbort(signal, () => clearTimeout(t)); … off();
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let set = waiters.get(signal);
  if (set === undefined) {
    const callbacks = new Set<() => void>();
    set = callbacks;
    waiters.set(signal, callbacks);
    signal.addEventListener(
      'abort',
      () => {
        waiters.delete(signal);
        for (const f of [...callbacks]) f();
      },
      { once: true },
    );
  }
  const callbacks = set;
  callbacks.add(fn);
  return () => {
    callbacks.delete(fn);
  };
}

/**
 * Resolves after `ms`, or at once when `signal` aborts. Its abort callback goes when the timer
 * fires: a long campaign sleeps many times on one signal.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const off = signal
      ? onAbort(signal, () => {
          clearTimeout(t);
          resolve();
        })
      : undefined;
    const t = setTimeout(() => {
      off?.();
      resolve();
    }, ms);
  });
}
