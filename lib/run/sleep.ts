/**
 * Resolves after `ms`, or at once when `signal` aborts. The abort listener is removed when the
 * timer fires: a long campaign sleeps many times on one signal, and leftover listeners pile up
 * (MaxListenersExceededWarning).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
