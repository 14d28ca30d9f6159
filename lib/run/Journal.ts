import { createWriteStream, mkdirSync, openSync, type WriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageError, storageCode, writeFailure } from '../store/storageErrors.js';

/**
 * The field of a journal line whose attempt was sent and never usably answered (a timeout, a 504, a
 * connection cut after sending): the USD it reserved, possibly billed. Journal-only: it is not a
 * column of the stored reply, and adoption drops it before the journal becomes a part.
 */
export const POSSIBLY_BILLED_FIELD = 'possibly_billed_usd';

/**
 * What a journal may hold not yet handed to the file before `backlogged` says so: a partition then
 * waits (`drained`) before it starts more calls. Replies answered faster than the disk takes them
 * (simulated models) piled up as buffered writes: a heap snapshot of a P(True) verify thread held
 * 40,700 of them, 55 MB, each a reply a kill -9 would have lost. Large enough that a write
 * gathers many lines into one.
 */
const BACKLOG_BYTES = 1024 * 1024;

/**
 * An append-only NDJSON file of reply rows, written as each reply arrives: a reply that cost money
 * is handed to the file before anything else happens to it, and the next run adopts the journals a
 * killed run left and counts their cost once. A kill -9 loses only the lines not yet written
 * (about BACKLOG_BYTES), whose items the next run asks again, their first ask counted as a call in
 * flight.
 */
export class Journal {
  /** Undefined when the file could not be opened: `failed` says why, and appends go nowhere. */
  private readonly stream: WriteStream | undefined;
  private rows = 0;
  #error: Error | undefined;

  private constructor(public readonly path: string) {
    // Opened here, synchronously: a journal that cannot be created (a full disk, a read-only
    // folder, a folder in its place) is known before the first call whose reply it would keep,
    // so the partition stops starting calls at once. A stream opening the file itself reports
    // that only after the thread pool has run the open, and calls go on meanwhile.
    let fd: number;
    try {
      fd = openSync(path, 'a');
    } catch (err) {
      this.#error = err as Error;
      return;
    }
    this.stream = createWriteStream(path, { fd, highWaterMark: BACKLOG_BYTES });
    // A full disk or a file-size limit fails a write here, later than `append` returned: kept and
    // reported (`failed`, and by `close`), not left to crash the process as an unhandled 'error'.
    this.stream.on('error', (err) => {
      this.#error ??= err;
    });
  }

  /** Why writing the journal failed (a full disk, a read-only folder), once it has. */
  get failed(): StorageError | undefined {
    if (this.#error === undefined) return undefined;
    const code = storageCode(this.#error) ?? 'EIO';
    return new StorageError(writeFailure(this.path, code, 'the replies that reached this journal are kept for the next run, the rest of its items stay pending'), this.path, code, {
      cause: this.#error,
    });
  }

  static async open(dir: string, name: string): Promise<Journal> {
    await mkdir(dir, { recursive: true });
    return new Journal(join(dir, name));
  }

  /**
   * `open` without an await, for callers that must swap journals within one turn of the event
   * loop (a part runner replacing the part that chunks attach to).
   */
  static openSync(dir: string, name: string): Journal {
    mkdirSync(dir, { recursive: true });
    return new Journal(join(dir, name));
  }

  get count(): number {
    return this.rows;
  }

  /**
   * Appends one attempt's row. `possiblyBilledUsd`: the attempt was sent and never usably answered,
   * and this is what it reserved; the line carries it (POSSIBLY_BILLED_FIELD) so that a run adopting
   * the journal after a kill counts the attempt as possibly billed, not at the row's $0.
   */
  append(row: object, possiblyBilledUsd?: number): void {
    const line = possiblyBilledUsd === undefined ? row : { ...row, [POSSIBLY_BILLED_FIELD]: possiblyBilledUsd };
    this.stream?.write(`${JSON.stringify(line)}\n`);
    this.rows++;
  }

  /** More than BACKLOG_BYTES appended and not yet handed to the file. */
  get backlogged(): boolean {
    return this.stream?.writableNeedDrain === true;
  }

  /** Resolves once the backlog is handed to the file (at once when there is none), or the stream failed or closed. */
  drained(): Promise<void> {
    const stream = this.stream;
    if (stream === undefined || !stream.writableNeedDrain || stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        stream.off('drain', done).off('error', done).off('close', done);
        resolve();
      };
      stream.on('drain', done).on('error', done).on('close', done);
    });
  }

  /** Flushes buffered writes to the file and closes it; rejects with `failed` when a write failed. */
  async close(): Promise<void> {
    const stream = this.stream;
    if (stream !== undefined && !stream.destroyed) {
      await new Promise<void>((resolve) =>
        stream.end((err?: Error | null) => {
          if (err) this.#error ??= err;
          resolve();
        }),
      );
    }
    const failed = this.failed;
    if (failed) throw failed;
  }
}

/**
 * Reads the rows of journals left by a killed run. A torn last line (the process died mid-write)
 * is dropped: that reply's item stays pending and is asked again.
 */
export async function readJournal<T>(path: string): Promise<T[]> {
  const text = await readFile(path, 'utf8');
  const rows: T[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      rows.push(JSON.parse(line) as T);
    } catch {
      // Only the final line can be torn; anything else is kept.
    }
  }
  return rows;
}

export async function listJournals(dir: string): Promise<string[]> {
  try {
    const names = await readdir(dir);
    // A rewrite of an adopted journal that a kill interrupted: the journal itself is intact.
    for (const n of names) if (n.endsWith('.ndjson.tmp')) await rm(join(dir, n), { force: true });
    const files = names.filter((n) => n.endsWith('.ndjson')).sort();
    const out: string[] = [];
    for (const n of files) if ((await stat(join(dir, n))).size > 0) out.push(join(dir, n));
    else await rm(join(dir, n), { force: true });
    return out;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
