// A partition thread's entry (partitionThreads.ts): its module, from the sources or compiled.
import { importThreadMain } from '../core/threadEntry.mjs';

await importThreadMain(new URL('./partitionThreadMain', import.meta.url));
