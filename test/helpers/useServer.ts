import { afterEach } from 'vitest';

/**
 * The stand-in server of the running test: `start` starts one with `startServer` (a test starts one at a
 * time), `current` is the one started last, and it is closed after each test. `name` says in the error
 * which helper's server a test read before starting it.
 */
export function useServer<S extends { close(): Promise<void> }, A extends unknown[]>(
  name: string,
  startServer: (...args: A) => Promise<S>,
): { start(...args: A): Promise<S>; readonly current: S } {
  let server: S | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return {
    async start(...args) {
      server = await startServer(...args);
      return server;
    },
    get current() {
      if (server === undefined) throw new Error(`${name}: no server started in this test`);
      return server;
    },
  };
}
