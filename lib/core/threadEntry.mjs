// The shared body of the worker-thread entries (lib/run/partitionThread.mjs and a battery's
// import threads). Worker threads do not inherit the main thread's module
// hooks on Node 20: from the TypeScript sources the thread loads its module through tsx itself, as
// bin/sondage.mjs does; the compiled package (dist/) has only the JavaScript, which it imports.
import { existsSync } from 'node:fs';

/** Imports `<base>.ts` through tsx when it exists, else `<base>.js`. */
export async function importThreadMain(base) {
  const source = new URL(`${base.href}.ts`);
  if (!existsSync(source)) return import(`${base.href}.js`);
  const { register } = await import('tsx/esm/api');
  register();
  return import(source.href);
}
