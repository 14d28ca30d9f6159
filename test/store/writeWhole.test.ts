import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StorageError } from '../../lib/store/storageErrors.js';
import { writeWhole } from '../../lib/store/writeWhole.js';
import { useTempDir } from '../helpers/campaigns.js';

// How both Parquet writers (ParquetWriter with DuckDB, JsParquet) commit a part file.

const scratch = useTempDir('write-whole');

describe('writeWhole', () => {
  it('makes the folders, renames the written temporary file into place and leaves nothing else', async () => {
    const target = path.join(scratch.dir, 'model=m', 'part-0.parquet');
    await writeWhole(target, (tmp) => writeFile(tmp, 'rows'));
    expect(await readFile(target, 'utf8')).toBe('rows');
    expect(await readdir(path.dirname(target))).toEqual(['part-0.parquet']);
  });

  it('a failure of the disk or the folder is a StorageError naming the file; nothing is left behind', async () => {
    const target = path.join(scratch.dir, 'part-0.parquet');
    await mkdir(path.join(target, 'inside'), { recursive: true });
    const err = await writeWhole(target, (tmp) => writeFile(tmp, 'rows')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).message).toMatch(/^could not write .*part-0\.parquet: it is a folder, not a file \(EISDIR\); nothing of this part was committed/);
    expect(await readdir(scratch.dir)).toEqual(['part-0.parquet']);
  });

  it('a file where the part\'s folder should be is named (mkdir\'s EEXIST), not hidden by the clean-up\'s ENOTDIR', async () => {
    await writeFile(path.join(scratch.dir, 'model=m'), 'a file where a folder should be');
    const target = path.join(scratch.dir, 'model=m', 'part-0.parquet');
    const err = await writeWhole(target, (tmp) => writeFile(tmp, 'rows')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).message).toMatch(/^could not write .*part-0\.parquet: it already exists \(EEXIST\)/);
    expect(await readdir(scratch.dir)).toEqual(['model=m']);
  });

  it('a DuckDB I/O error (its code only in the message) is named as the disk; the half-written file is removed', async () => {
    const target = path.join(scratch.dir, 'part-0.parquet');
    const err = await writeWhole(target, async (tmp) => {
      await writeFile(tmp, 'half');
      throw new Error(`IO Error: Could not write file "${tmp}": No space left on device`);
    }).catch((e: unknown) => e);
    expect((err as StorageError).code).toBe('ENOSPC');
    expect(await readdir(scratch.dir)).toEqual([]);
  });

  it('any other error passes through as it is, and the file stays unwritten', async () => {
    const target = path.join(scratch.dir, 'part-0.parquet');
    const bug = new TypeError('x is undefined');
    await expect(writeWhole(target, async (tmp) => {
      await writeFile(tmp, 'half');
      throw bug;
    })).rejects.toBe(bug);
    expect(await readdir(scratch.dir)).toEqual([]);
  });
});
