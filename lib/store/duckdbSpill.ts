import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeOwnedFolder, removeAbandonedFolders } from './ownedFolders.js';

const SPILL_PREFIX = 'spill-';

/** Where DuckDB spills past its memory limit: the OS temp folder, not a `.tmp` in the user's cwd. */
function spillBase(): string {
  return path.join(os.tmpdir(), 'sondage-duckdb');
}

/**
 * A DuckDB instance created by `create` with `config` and a spill folder of its own (ownSpillFolder);
 * `close` closes the instance, then removes the folder. A failed create leaves no folder behind.
 * @example const { instance, close } = await spillingInstance({ memory_limit: '256MB' }, (c) => DuckDBInstance.create(':memory:', c));
 */
export async function spillingInstance<I extends { closeSync(): void }>(
  config: Readonly<Record<string, string>>,
  create: (config: Record<string, string>) => Promise<I>,
): Promise<{ readonly instance: I; close(): void }> {
  const folder = await ownSpillFolder();
  let instance: I;
  try {
    instance = await create({ ...config, temp_directory: folder });
  } catch (err) {
    removeSpillFolder(folder);
    throw err;
  }
  return {
    instance,
    close: () => {
      instance.closeSync();
      removeSpillFolder(folder);
    },
  };
}

/**
 * A `temp_directory` for one DuckDB instance, of its own. DuckDB names its spill files by size
 * class and number only, and an instance that closes deletes every `duckdb_temp_*` file of its
 * folder, its neighbours' too (duckdb/duckdb#15173): two instances sharing one — two partition
 * threads each writing Parquet parts, or two runs — read each other's blocks as their own. At three
 * times FAR-6's full design, where the parts spill, that was a segfault in DuckDB's Parquet writer.
 * `removeSpillFolder` when the instance is closed (spillingInstance does both).
 */
async function ownSpillFolder(): Promise<string> {
  const base = spillBase();
  await removeAbandonedFolders(base, SPILL_PREFIX);
  return makeOwnedFolder(base, SPILL_PREFIX);
}

/** Removes a folder `ownSpillFolder` made, once its instance is closed (synchronous: closing DuckDB is). */
function removeSpillFolder(folder: string): void {
  rmSync(folder, { recursive: true, force: true });
}
