/** Shared by the GPU tests: the fake vLLM server script and free ports for it. */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from './campaigns.js';

/** test/helpers/fakeVllm.mjs: started with `node` where the job starts `vllm`. */
export const FAKE_VLLM = path.join(REPO_ROOT, 'test', 'helpers', 'fakeVllm.mjs');

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
