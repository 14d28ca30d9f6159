// An import thread's entry (importThreads.ts): its module, from the sources or compiled.
import { importThreadMain } from '../../../core/threadEntry.mjs';

await importThreadMain(new URL('./importThreadMain', import.meta.url));
