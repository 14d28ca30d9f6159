// An import thread's entry (importThreads.ts): worker threads do not inherit the main thread's
// module hooks on Node 20, so this one loads the TypeScript through tsx itself, as
// bin/sondage.mjs does.
import { register } from 'tsx/esm/api';

register();
await import('./importThreadMain.ts');
