import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SondageError } from '../errors.js';
import type { BlobStore } from './types.js';

/**
 * Name of the temporary file a write goes through before its rename. Hidden and ending in
 * `.tmp`, so `list` and the readers' `*.parquet` globs never see a half-written file.
 */
export function tempSibling(filePath: string): string {
  return path.join(path.dirname(filePath), `.${path.basename(filePath)}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
}

function isTempName(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}

/**
 * Throws unless `key` is a relative, normalised `/`-separated path: keys are the same on disk and in
 * S3, and a key must never reach outside the store's root.
 */
export function assertKey(key: string): void {
  const segments = key.split('/');
  const bad =
    key.length === 0 ||
    key.includes('\\') ||
    key.includes('\0') ||
    segments.some((s) => s === '' || s === '.' || s === '..');
  if (bad) {
    throw new SondageError(
      `blob key ${JSON.stringify(key)} is not a relative path of non-empty '/'-separated segments without '.' or '..'`,
    );
  }
}

function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * BlobStore over a directory, laid out exactly like the S3 bucket, so DuckDB reads the files in
 * place (`localPath`). Writes go to a temporary sibling and are renamed into place: a reader sees
 * the old file or the new one, never a partial one.
 *
 * @example
 * const store = new LocalBlobStore('./data');
 * await store.put('campaigns/demo/plan.json', JSON.stringify(plan));
 */
export class LocalBlobStore implements BlobStore {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  localPath(key: string): string {
    assertKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Uint8Array | string): Promise<void> {
    const target = this.localPath(key);
    await mkdir(path.dirname(target), { recursive: true });
    const tmp = tempSibling(target);
    try {
      await writeFile(tmp, body);
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(await readFile(this.localPath(key)));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.localPath(key))).isFile();
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /**
   * Keys that start with `prefix` (plain string prefix, as in S3), recursively, sorted by code
   * unit. Temporary files of writes in progress are left out.
   */
  async list(prefix: string): Promise<string[]> {
    // Walk only below the deepest folder the prefix names.
    const slash = prefix.lastIndexOf('/');
    const dirKey = slash < 0 ? '' : prefix.slice(0, slash);
    if (dirKey !== '') assertKey(dirKey);
    const start = dirKey === '' ? this.root : path.join(this.root, ...dirKey.split('/'));
    const keys: string[] = [];
    const walk = async (dir: string, keyPrefix: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      for (const e of entries) {
        const key = keyPrefix + e.name;
        if (e.isDirectory()) {
          // Skip folders that cannot hold a matching key.
          const asDir = `${key}/`;
          if (asDir.startsWith(prefix) || prefix.startsWith(asDir)) await walk(path.join(dir, e.name), asDir);
        } else if (e.isFile() && !isTempName(e.name) && key.startsWith(prefix)) {
          keys.push(key);
        }
      }
    };
    await walk(start, dirKey === '' ? '' : `${dirKey}/`);
    return keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** A rename: a reader sees the file at `from` or at `to`, whole, never both or half. */
  async move(from: string, to: string): Promise<boolean> {
    const target = this.localPath(to);
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await rename(this.localPath(from), target);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.localPath(key));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
