import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isProcessAlive } from './lock.js';

/**
 * Scratch folders named `<prefix><pid>@<host>-XXXXXX`: whose they are is in the name, so that a
 * folder a killed process left (kill -9 gives its `close` no chance) is removed by the next process
 * that makes one, and a live process's folder never is.
 */
export async function makeOwnedFolder(base: string, prefix: string): Promise<string> {
  await mkdir(base, { recursive: true });
  return mkdtemp(path.join(base, `${prefix}${process.pid}@${os.hostname()}-`));
}

/** Removes the folders of `base` named by `makeOwnedFolder(base, prefix)` whose process, on this host, no longer runs. */
export async function removeAbandonedFolders(base: string, prefix: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(base);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const owner = ownerOf(name, prefix);
    if (!owner || owner.host !== os.hostname() || isProcessAlive(owner.pid)) continue;
    await rm(path.join(base, name), { recursive: true, force: true }).then(() => removed++, () => undefined);
  }
  return removed;
}

function ownerOf(name: string, prefix: string): { pid: number; host: string } | undefined {
  if (!name.startsWith(prefix)) return undefined;
  const m = /^(\d+)@(.+)-[A-Za-z0-9]{6}$/.exec(name.slice(prefix.length));
  return m ? { pid: Number(m[1]), host: m[2]! } : undefined;
}
