import { afterAll, beforeAll } from 'vitest';
import { SECRET_ARN, startHarness, type Harness } from './harnessCore.js';

export * from './harnessCore.js';

/**
 * The harness of a test file: started before its first test with `secret` as the provider secret,
 * closed after its last. The value returned stands for the started harness (its fields are read
 * when a test runs), so a file writes `const h = useHarness();` instead of the hooks.
 */
export function useHarness(secret: Readonly<Record<string, string>> = {}): Harness {
  let started: Harness | undefined;
  beforeAll(async () => {
    started = await startHarness();
    started.secrets.secrets.set(SECRET_ARN, JSON.stringify(secret));
  });
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as Harness, {
    get: (_target, key) => {
      if (!started) throw new Error('the harness starts in beforeAll: read it inside a test or hook');
      return Reflect.get(started, key) as unknown;
    },
  });
}

