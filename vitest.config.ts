import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one fork per core but one: a single fork on the 2-core machines this
    // suite runs on. Most files spend their time waiting on child processes, threads and local
    // servers, so two forks keep both cores busy.
    maxWorkers: 2,
  },
});
