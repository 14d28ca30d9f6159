import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { tempSibling } from './LocalBlobStore.js';
import { StorageError, storageCode, writeFailure } from './storageErrors.js';

/**
 * Writes the file at `filePath` whole or not at all: `write` fills a temporary sibling, which is
 * then renamed into place, so a reader never sees half a part. A failure of the disk or the folder
 * (errno's code, or DuckDB's "IO Error: … No space left on device", which says it in its message
 * only) becomes a StorageError naming the file; any other error passes through. The temporary file
 * is removed either way. Both Parquet writers (ParquetWriter, JsParquet) commit their parts here.
 * @example await writeWhole('/data/part-0.parquet', (tmp) => writeFile(tmp, bytes))
 */
export async function writeWhole(filePath: string, write: (tmpPath: string) => Promise<unknown>): Promise<void> {
  const target = path.resolve(filePath);
  const tmp = tempSibling(target);
  try {
    await mkdir(path.dirname(target), { recursive: true });
    await write(tmp);
    await rename(tmp, target);
  } catch (err) {
    const code = err instanceof StorageError ? undefined : storageCode(err);
    if (code === undefined) throw err;
    throw new StorageError(writeFailure(target, code), target, code, { cause: err });
  } finally {
    // Where the folder could not be made (a file stands in its place) the temporary file's path
    // is unusable too, and rm's own ENOTDIR must not hide the error that says so.
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}
