import { DuckDBInstance } from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SondageError } from '../errors.js';
import { partKey } from './layout.js';
import { tempSibling } from './LocalBlobStore.js';
import { sqlIdent, sqlString } from './DuckDb.js';
import { columnsOf, rowEncoder } from './parquetParts.js';
import type { PartitionCheck, PartTarget, PartWriter, Rows, WriteOptions, WrittenPart } from './parquetParts.js';
import { isProcessAlive } from './lock.js';
import { StorageError, storageCode, writeFailure } from './storageErrors.js';
import type { ColumnDef, TableRows } from './schemas.js';
import type { BlobStore, TableName } from './types.js';

export type { PartitionCheck, PartTarget, PartWriter, WriteOptions, WrittenPart } from './parquetParts.js';

/** NDJSON is flushed to disk in pieces of about this many characters. */
const CHUNK_CHARS = 4 * 1024 * 1024;

/** Staging folders are `sondage-parquet-<pid>@<host>-XXXXXX`: whose they are is in the name. */
const STAGING_PREFIX = 'sondage-parquet-';
const STAGING_NAME = /^sondage-parquet-(\d+)@(.+)-[A-Za-z0-9]{6}$/;
/** Before pid@host names: `sondage-parquet-XXXXXX`, removed only when empty and this old. */
const LEGACY_NAME = /^sondage-parquet-[A-Za-z0-9]{6}$/;
const LEGACY_AGE_MS = 3_600_000;

/**
 * Removes the staging folders that killed writers left in `base` (a kill -9 gives `close` no
 * chance): those of a process of this host that no longer runs, and empty unnamed ones an hour
 * old. A live writer's folder — another run on the same data folder — is never touched.
 */
export async function removeAbandonedStaging(base: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(base);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const owner = STAGING_NAME.exec(name);
    const folder = path.join(base, name);
    if (owner) {
      if (owner[2] !== os.hostname() || isProcessAlive(Number(owner[1]))) continue;
      await rm(folder, { recursive: true, force: true }).then(() => removed++, () => undefined);
    } else if (LEGACY_NAME.test(name)) {
      const old = await stat(folder).then((s) => s.isDirectory() && Date.now() - s.mtimeMs > LEGACY_AGE_MS, () => false);
      // rmdir refuses a folder that is not empty: a writer still staging keeps it.
      if (old) await rmdir(folder).then(() => removed++, () => undefined);
    }
  }
  return removed;
}

/**
 * Writes all of `bytes`: one write may take fewer than it was given (a full disk, a file-size
 * limit: the kernel writes what fits and says how much), and a staging file cut short reached
 * DuckDB as "Malformed JSON" — the part's rows silently short, or the run dead with no word of
 * the disk. A write that takes nothing, or fails, is a StorageError naming the file.
 */
export async function writeFully(handle: Pick<FileHandle, 'write'>, bytes: Uint8Array, file: string): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    let written: number;
    try {
      ({ bytesWritten: written } = await handle.write(bytes, offset, bytes.length - offset));
    } catch (err) {
      const code = storageCode(err) ?? 'EIO';
      throw new StorageError(writeFailure(file, code), file, code, { cause: err });
    }
    if (written <= 0) {
      throw new StorageError(writeFailure(file, 'ENOSPC', `the disk took none of the last ${bytes.length - offset} bytes; nothing of this part was committed`), file, 'ENOSPC');
    }
    offset += written;
  }
}

/**
 * Writes the rows of one table partition to one Parquet part file (zstd) with DuckDB: rows are
 * checked against the table schema and streamed to a temporary NDJSON file, DuckDB converts it
 * with explicit column types, and the result is renamed into place (readers never see a partial
 * part). Partition columns are checked against the target, then left out of the file.
 *
 * One DuckDB instance per writer, reused across parts; `close()` frees it.
 *
 * @example
 * const writer = await ParquetWriter.create();
 * await writer.writePart(store, { campaign: 'demo', phase: 'generate', table: 'replies',
 *   model: 'alpha', language: 'de', partName: 'part-0001.parquet' }, replyRows);
 * await writer.close();
 */
export class ParquetWriter implements PartWriter {
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly tmpDir: string,
  ) {}

  /** `tmpDir`: where the NDJSON staging files go (default: a fresh folder in the OS temp dir). */
  static async create(options: { readonly tmpDir?: string; readonly threads?: number; readonly memoryLimit?: string } = {}): Promise<ParquetWriter> {
    const base = options.tmpDir ?? os.tmpdir();
    await mkdir(base, { recursive: true });
    await removeAbandonedStaging(base);
    const tmpDir = await mkdtemp(path.join(base, `${STAGING_PREFIX}${process.pid}@${os.hostname()}-`));
    const config: Record<string, string> = {};
    if (options.threads !== undefined) config['threads'] = String(options.threads);
    // DuckDB would otherwise take up to 80 % of RAM for its buffers and keep what it took; the
    // local run shares the machine with its own JS heap (bench/local-throughput measures RSS).
    config['memory_limit'] = options.memoryLimit ?? '256MB';
    // Spills past the limit go to the OS temp folder, not to a .tmp folder in the user's cwd.
    config['temp_directory'] = path.join(os.tmpdir(), 'sondage-duckdb');
    return new ParquetWriter(await DuckDBInstance.create(':memory:', config), tmpDir);
  }

  /**
   * Writes `rows` to the Parquet file at `filePath` (atomically). With `partition`, every row
   * must carry those campaign, phase, model and language. Returns the number of rows.
   */
  async writeFile<T extends TableName>(
    table: T,
    rows: Rows<T>,
    filePath: string,
    partition?: PartitionCheck,
    options: WriteOptions = {},
  ): Promise<number> {
    if (this.closed) throw new SondageError('ParquetWriter is closed');
    const columns = columnsOf(table, options.columns);
    const ndjson = path.join(this.tmpDir, `${randomBytes(8).toString('hex')}.ndjson`);
    try {
      const count = await this.stage(table, columns, rows, ndjson, partition, options.trusted);
      await this.convert(table, ndjson, filePath, columns);
      return count;
    } finally {
      await rm(ndjson, { force: true });
    }
  }

  /**
   * Converts an NDJSON file whose rows sondage wrote itself (a run's reply journal) into the
   * Parquet file at `filePath`, without parsing or re-serializing the rows in JavaScript: keys
   * outside the table's schema (the partition columns) are ignored by DuckDB's reader.
   */
  async convert(table: TableName, ndjsonPath: string, filePath: string, columns?: readonly ColumnDef[]): Promise<void> {
    if (this.closed) throw new SondageError('ParquetWriter is closed');
    const schema = columnsOf(table, columns);
    const target = path.resolve(filePath);
    const tmpTarget = tempSibling(target);
    try {
      await mkdir(path.dirname(target), { recursive: true });
      const columns = schema.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(', ');
      const select = schema.map((c) => sqlIdent(c.name)).join(', ');
      const connection = await this.instance.connect();
      try {
        await connection.run(
          `COPY (SELECT ${select} FROM read_ndjson(${sqlString(ndjsonPath)}, columns = {${columns}}, ` +
            `format = 'newline_delimited')) ` +
            `TO ${sqlString(tmpTarget)} (FORMAT parquet, COMPRESSION zstd)`,
        );
      } finally {
        connection.closeSync();
      }
      await rename(tmpTarget, target);
    } catch (err) {
      // DuckDB says "IO Error: … No space left on device" in its message only: named as the disk.
      const code = err instanceof StorageError ? undefined : storageCode(err);
      if (code === undefined) throw err;
      throw new StorageError(writeFailure(target, code), target, code, { cause: err });
    } finally {
      await rm(tmpTarget, { force: true });
    }
  }

  /** `convert` into a store at `partKey(target…)`; returns the key. */
  async convertPart(store: BlobStore, target: PartTarget, ndjsonPath: string): Promise<string> {
    const key = partKey(target.campaign, target.phase, target.table, target.model, target.language, target.partName);
    const local = store.localPath?.(key);
    if (local !== undefined) {
      await this.convert(target.table, ndjsonPath, local);
      return key;
    }
    const staged = path.join(this.tmpDir, `${randomBytes(8).toString('hex')}.parquet`);
    try {
      await this.convert(target.table, ndjsonPath, staged);
      await store.put(key, await readFile(staged));
      return key;
    } finally {
      await rm(staged, { force: true });
    }
  }

  /**
   * Writes one part into a store, at `partKey(target…)`: in place where the store is a directory,
   * otherwise through a local temporary file and `put`.
   */
  async writePart<T extends TableName>(
    store: BlobStore,
    target: PartTarget<T>,
    rows: Rows<T>,
    options: WriteOptions = {},
  ): Promise<WrittenPart> {
    const key = partKey(target.campaign, target.phase, target.table, target.model, target.language, target.partName);
    const local = store.localPath?.(key);
    if (local !== undefined) {
      const count = await this.writeFile(target.table, rows, local, target, options);
      return { key, rows: count, bytes: (await stat(local)).size };
    }
    const staged = path.join(this.tmpDir, `${randomBytes(8).toString('hex')}.parquet`);
    try {
      const count = await this.writeFile(target.table, rows, staged, target, options);
      const body = await readFile(staged);
      await store.put(key, body);
      return { key, rows: count, bytes: body.byteLength };
    } finally {
      await rm(staged, { force: true });
    }
  }

  // Streams rows as NDJSON in bounded chunks, so a large part never exists as one giant string.
  private async stage<T extends TableName>(
    table: T,
    columns: readonly ColumnDef[],
    rows: Rows<T>,
    file: string,
    partition: PartitionCheck | undefined,
    trusted = false,
  ): Promise<number> {
    const encode = rowEncoder(table, columns, partition, trusted);
    const handle = await open(file, 'w');
    try {
      let chunk: string[] = [];
      let chars = 0;
      let count = 0;
      const add = (row: TableRows[T]): boolean => {
        const line = encode(row as unknown as Record<string, unknown>, count++);
        chunk.push(line);
        chars += line.length;
        return chars >= CHUNK_CHARS;
      };
      const flush = async (): Promise<void> => {
        if (chunk.length === 0) return;
        const bytes = Buffer.from(chunk.join(''), 'utf8');
        chunk = [];
        chars = 0;
        await writeFully(handle, bytes, file);
      };
      // `for await` over an array would cost a promise per row: iterate sync sources synchronously.
      if (Symbol.asyncIterator in rows) {
        for await (const row of rows) if (add(row)) await flush();
      } else {
        for (const row of rows) if (add(row)) await flush();
      }
      await flush();
      return count;
    } finally {
      await handle.close();
    }
  }

  /** Frees the DuckDB instance and the staging folder. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.instance.closeSync();
    await rm(this.tmpDir, { recursive: true, force: true });
  }
}
