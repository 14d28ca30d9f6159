// A partition thread's entry (partitionThreads.ts): worker threads do not inherit the main
// thread's module hooks on Node 20, so from the TypeScript sources this one loads them through
// tsx itself, as bin/sondage.mjs does; the compiled package (dist/) imports the JavaScript.
import { existsSync } from 'node:fs';

const source = new URL('./partitionThreadMain.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('./partitionThreadMain.js');
}
