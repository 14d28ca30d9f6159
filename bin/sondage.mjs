#!/bin/sh
":" //; exec node --single-threaded-gc "$0" "$@"
// The line above is for a POSIX shell, which the first line picks: it starts node with V8's
// garbage collector on one thread, and `exec` keeps the process (Ctrl-C, `kill` and `sondage stop`
// reach node itself). For JavaScript it is a string and a comment. A local run keeps both cores
// busy with its partition threads; V8's parallel collector helpers then cost more CPU than they
// save (the full-size FAR-6 benchmark took 83 s instead of 87 s). `node bin/sondage.mjs …` runs the
// same CLI without the flag, which is also the way on Windows.

// In a clone, the TypeScript sources run from a bundle that is built again when a source changed
// (lib/core/sourceBundle.mjs), or through tsx's loader when it cannot be had: either way a change
// needs no build step. The installed package has no sources and runs its compiled JavaScript
// (dist/, `npm run build`).
import { existsSync } from 'node:fs';

const source = new URL('../lib/cli/main.ts', import.meta.url);
let main;
if (existsSync(source)) {
  const { importBundledEntry } = await import('../lib/core/sourceBundle.mjs');
  const bundled = await importBundledEntry('cli/main');
  if (bundled) ({ main } = bundled);
  else {
    const { register } = await import('tsx/esm/api');
    register();
    ({ main } = await import(source.href));
  }
} else {
  ({ main } = await import('../dist/lib/cli/main.js'));
}
process.exitCode = await main(process.argv.slice(2));
