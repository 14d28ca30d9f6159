/**
 * File-system, SQLite and DuckDB failures as people read them: which file or folder, what went
 * wrong in plain words (the disk is full, the folder is read-only), and what to do — never a
 * stack trace. Failures of the machine, not of sondage: the CLI prints them and exits 1.
 */
import { SondageError } from '../errors.js';

/** A file or folder sondage needs could not be read or written (disk full, read-only, not a folder). */
export class StorageError extends SondageError {
  constructor(
    message: string,
    /** The file or folder, when known. */
    public readonly path?: string,
    /** `ENOSPC`, `SQLITE_FULL`, … */
    public readonly code?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'StorageError';
  }
}

/** errno and SQLite codes → what happened, in words. */
const REASONS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EFBIG: 'the file grew past the size this process may write (a file-size limit, ulimit -f?)',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'part of the path is a file, not a folder',
  EISDIR: 'it is a folder, not a file',
  EEXIST: 'it already exists',
  ENOENT: 'no such file or folder',
  EMFILE: 'too many files are open',
  ENFILE: 'too many files are open on this machine',
  EIO: 'an input/output error of the disk',
  SQLITE_FULL: 'the disk is full',
  SQLITE_READONLY: 'the file or its folder is read-only',
  SQLITE_CANTOPEN: 'SQLite cannot open it (is its folder read-only?)',
  SQLITE_IOERR: 'an input/output error of the disk',
  SQLITE_NOTADB: 'it is not a SQLite database',
  SQLITE_CORRUPT: 'the database file is damaged',
  SQLITE_PERM: 'permission denied',
};

/** Codes that mean the disk or the folder, not the input: running again after the fix resumes. */
const SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'SQLITE_FULL']);

/** Codes that mean something else stands where the file goes (a folder for a file, a file for a folder). */
const IN_THE_WAY = new Set(['EISDIR', 'ENOTDIR', 'EEXIST']);

/** The code of a file-system or SQLite error (`SQLITE_IOERR_WRITE` → `SQLITE_IOERR`), or undefined. */
export function storageCode(err: unknown): string | undefined {
  if (err instanceof StorageError) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return duckDbCode(err);
  if (Object.hasOwn(REASONS, code)) return code;
  const base = /^(SQLITE_[A-Z]+)_/.exec(code)?.[1];
  return base !== undefined && Object.hasOwn(REASONS, base) ? base : undefined;
}

/** DuckDB reports I/O failures in its message only ("IO Error: Could not write file …: No space left on device"). */
function duckDbCode(err: unknown): string | undefined {
  const message = err instanceof Error ? err.message : '';
  if (!/^IO Error:|Could not (write|read|open|create)/i.test(message)) return undefined;
  if (/No space left on device/i.test(message)) return 'ENOSPC';
  if (/File too large/i.test(message)) return 'EFBIG';
  if (/Read-only file system/i.test(message)) return 'EROFS';
  if (/Permission denied/i.test(message)) return 'EACCES';
  return 'EIO';
}

/**
 * The message of a write that failed on `file`: what happened and what to do, and that what was
 * committed before is kept (parts are renamed into place whole, ledger commits are transactions,
 * journals are adopted by the next run).
 */
export function writeFailure(file: string, code: string, what = 'nothing of this part was committed'): string {
  const fix = SPACE.has(code) ? 'free some space (or raise the limit)' : IN_THE_WAY.has(code) ? 'move aside what stands at that path' : 'make the folder writable';
  return `could not write ${file}: ${storageReason(code)} (${code}); ${what}. ${fix[0]!.toUpperCase()}${fix.slice(1)}, then run the same command again: what was committed before is kept and the run resumes from it`;
}

/** What happened, in words, for a code storageCode gives. */
export function storageReason(code: string): string {
  return REASONS[code] ?? code;
}

/** The path an error names: errno's `path`, or the quoted file of a DuckDB I/O message. */
function pathOf(err: unknown): string | undefined {
  const p = (err as { path?: unknown } | null)?.path;
  if (typeof p === 'string') return p;
  return /file "([^"]+)"/.exec(err instanceof Error ? err.message : '')?.[1];
}

/**
 * The sentence for a storage failure of a command (`what`: "write", "open the ledger"), or
 * undefined when `err` is not one (a bug keeps its stack trace). Says what was kept.
 * @example describeStorageFailure(Object.assign(new Error('x'), { code: 'ENOSPC', path: '/d/ledger.sqlite' }))
 */
export function describeStorageFailure(err: unknown): string | undefined {
  const code = storageCode(err);
  if (code === undefined) return undefined;
  if (err instanceof StorageError) return err.message;
  // SQLite is only ever the ledger; its errors carry no file name.
  const where = code.startsWith('SQLITE_') ? 'the ledger (ledger.sqlite in the data folder)' : (pathOf(err) ?? 'the data folder');
  const reason = code === 'SQLITE_IOERR' ? 'an input/output error while writing it (a full disk or a file-size limit?)' : storageReason(code);
  const fix = SPACE.has(code) || code === 'SQLITE_IOERR' ? 'free some space (or raise the limit)' : 'fix the folder (or give another with --data-dir / --out)';
  return (
    `sondage: could not write ${where}: ${reason} (${code}); ${fix}, then run the same command again. ` +
    'What was committed before is kept (stored replies, the ledger), and a run resumes from it'
  );
}

/**
 * Why the ledger file could not be opened, naming it: not a database (overwritten or damaged), a
 * read-only folder, a full disk. Any other error is returned as it is (a bug keeps its trace).
 */
export function ledgerOpenError(file: string, err: unknown): unknown {
  const code = storageCode(err);
  if (code === undefined) return err;
  const fix =
    code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT'
      ? 'nothing was changed. Restore it from a copy, or move it aside to start the accounting afresh (the next run then asks again the items it cannot see as done)'
      : SPACE.has(code)
        ? 'free some space, then run again'
        : 'make the data folder and the ledger writable (or give another folder with --data-dir), then run again';
  return new StorageError(`${file}: the ledger cannot be opened: ${storageReason(code)} (${code}); ${fix}`, file, code, { cause: err });
}
