/** Shared by the GPU tests: the fake vLLM server script and free ports for it. */
import path from 'node:path';
import { REPO_ROOT } from './campaigns.js';

/** test/helpers/fakeVllm.mjs: started with `node` where the job starts `vllm`. */
export const FAKE_VLLM = path.join(REPO_ROOT, 'test', 'helpers', 'fakeVllm.mjs');

export { freePort } from './localServer.js';
