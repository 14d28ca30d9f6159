import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // A battery from the user's folder imports `sondage/battery`. The CLI routes that to its own
    // copy with a module hook (lib/batteries/selfReference.ts); modules the tests load go through
    // Vite's resolver instead, which would find the package's compiled dist/ (absent in a fresh
    // clone, another copy of the core when present): the same routing, said to Vite.
    alias: [{ find: /^sondage(\/battery)?$/, replacement: fileURLToPath(new URL('./lib/api/battery.ts', import.meta.url)) }],
  },
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
