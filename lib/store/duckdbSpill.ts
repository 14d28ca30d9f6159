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
 * A `temp_directory` for one DuckDB instance, of its own. DuckDB names its spill files by size
 * class and number only, and an instance that closes deletes every `duckdb_temp_*` file of its
 * folder, its neighbours' too (duckdb/duckdb#15173): two instances sharing one — two partition
 * threads each writing Parquet parts, or two runs — read each other's blocks as their own. At three
 * times FAR-6's full design, where the parts spill, that was a segfault in DuckDB's Parquet writer.
 * `removeSpillFolder` when the instance is closed.
 */
export async function ownSpillFolder(): Promise<string> {
  const base = spillBase();
  await removeAbandonedFolders(base, SPILL_PREFIX);
  return makeOwnedFolder(base, SPILL_PREFIX);
}

/** Removes a folder `ownSpillFolder` made, once its instance is closed (synchronous: closing DuckDB is). */
export function removeSpillFolder(folder: string): void {
  rmSync(folder, { recursive: true, force: true });
}
