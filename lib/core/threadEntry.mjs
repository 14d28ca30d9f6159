// The shared body of the worker-thread entries (lib/run/partitionThread.mjs and a battery's
// import threads). Worker threads do not inherit the main thread's module hooks on Node 20: from
// the TypeScript sources the thread imports its module from the clone's bundle (sourceBundle.mjs),
// or through tsx itself when there is none, as bin/sondage.mjs does; the compiled package (dist/)
// has only the JavaScript, which it imports.
import { existsSync } from 'node:fs';
import { importBundledEntry } from './sourceBundle.mjs';

const LIB = new URL('../', import.meta.url).href;

/** Imports `<base>.ts` from the sources when it exists, else `<base>.js`. */
export async function importThreadMain(base) {
  const source = new URL(`${base.href}.ts`);
  if (!existsSync(source)) return import(`${base.href}.js`);
  const bundled = source.href.startsWith(LIB) ? await importBundledEntry(source.href.slice(LIB.length, -'.ts'.length)) : undefined;
  if (bundled) return bundled;
  const { register } = await import('tsx/esm/api');
  register();
  return import(source.href);
}
