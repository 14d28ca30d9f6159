/**
 * What `p` settles with if it settles within `ms`, else 'waiting': for tests that a promise is not
 * held up behind another (a query on a second connection), where waiting for it would hang.
 */
export function within<T>(p: Promise<T>, ms: number): Promise<T | 'waiting'> {
  return Promise.race([p, new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), ms))]);
}
