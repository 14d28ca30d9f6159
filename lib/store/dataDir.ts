/**
 * The data folder checked before a command writes anything into it: a folder (not a file, not
 * `/dev/null`), on an ordinary file system (not `/proc`), that this process can write in —
 * together with the campaign's own folders already there (a read-only `results/` would otherwise
 * fail a run only after every call was paid for). Node's recursive mkdir loops forever under
 * `/proc/self` (mkdir there answers ENOENT for a parent that exists): the probe refuses such a
 * place before any writer's mkdir runs.
 */
import { randomBytes } from 'node:crypto';
import { access, constants, mkdir, open, readdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { StorageError, storageReason } from './storageErrors.js';

export interface DataDirOptions {
  /**
   * How the folder was given, for messages: `--data-dir` or `campaign.yaml: data_dir`. The
   * message then reads `<label> <folder>: <problem>; expected …`.
   */
  readonly label: string;
  /** The campaign whose folders (`campaigns/<name>`, its `results/`) must be writable too, when they exist. */
  readonly campaign?: string;
  /** Check the ledger file too (default true); the analysis reads Parquet only and needs no ledger. */
  readonly ledger?: boolean;
  /** What the folder is for, after "expected" (default: the campaign's data). */
  readonly expected?: string;
}

const EXPECTED = "expected a folder you can write in, for the campaign's data (prompts, replies, the ledger, results)";

function fail(options: DataDirOptions, folder: string, problem: string, code?: string, cause?: unknown): never {
  throw new StorageError(`${options.label} ${folder}: ${problem}; ${options.expected ?? EXPECTED}`, folder, code, cause === undefined ? undefined : { cause });
}

function codeOf(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? 'EIO';
}

/** What a failed file creation in `parent` means; ENOENT in an existing folder: a virtual file system. */
function creationProblem(code: string, parent: string): string {
  if (code === 'ENOENT') return `nothing can be created in ${parent}: it is not an ordinary folder (a virtual file system such as /proc?)`;
  return `cannot create anything in ${parent}: ${storageReason(code)}`;
}

async function kindAt(p: string): Promise<'folder' | 'file' | 'other' | 'missing'> {
  try {
    const s = await stat(p);
    return s.isDirectory() ? 'folder' : s.isFile() ? 'file' : 'other';
  } catch (err) {
    const code = codeOf(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw err;
  }
}

/** Creates and removes a small file in `folder`: the only sure test of writing there (root passes access checks). */
async function probeWrite(folder: string, root: string, options: DataDirOptions): Promise<void> {
  const probe = path.join(folder, `.sondage-write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(probe, '', { flag: 'wx' });
  } catch (err) {
    fail(options, root, creationProblem(codeOf(err), folder), codeOf(err), err);
  }
  await unlink(probe).catch(() => undefined);
}

/** The SQLite file header: a ledger that does not start with it was overwritten (or is not one). */
const SQLITE_HEADER = 'SQLite format 3\u0000';

/**
 * Checks the ledger file of a data folder, when there is one: a file, that is a SQLite database,
 * that this process may write. A damaged ledger is named before anything opens it.
 * @throws StorageError naming the file, what is wrong and what to do.
 */
export async function checkLedgerFile(dataDir: string): Promise<void> {
  const file = path.join(path.resolve(dataDir), 'ledger.sqlite');
  const kind = await kindAt(file);
  if (kind === 'missing') return;
  if (kind !== 'file') throw new StorageError(`${file}: the ledger is not a file; move it aside, then run again`, file, 'EISDIR');
  const handle = await open(file, 'r');
  let head: string;
  try {
    const buf = Buffer.alloc(16);
    const { bytesRead } = await handle.read(buf, 0, 16, 0);
    head = bytesRead === 0 ? '' : buf.subarray(0, bytesRead).toString('latin1');
  } finally {
    await handle.close();
  }
  // An empty file is what SQLite creates first: it becomes a ledger when opened.
  if (head !== '' && head !== SQLITE_HEADER) {
    throw new StorageError(
      `${file}: the ledger is not a SQLite database (it was overwritten or damaged); nothing was changed. ` +
        'Restore it from a copy, or move it aside to start the accounting afresh (the next run then asks again the items it cannot see as done)',
      file,
      'SQLITE_NOTADB',
    );
  }
  try {
    await access(file, constants.W_OK);
  } catch (err) {
    throw new StorageError(`${file}: the ledger cannot be written (${storageReason(codeOf(err))}); make it writable, then run again`, file, codeOf(err), { cause: err });
  }
}

/**
 * Makes sure `dataDir` is, or can become, a folder this process can write in: the nearest part of
 * the path that exists must be a folder on an ordinary file system that takes a new file (a probe,
 * removed at once). The campaign's folders there and its ledger are checked too. Nothing is
 * created: a campaign refused later (its budget, a simulation setting) leaves no folder behind,
 * and the writers' recursive mkdir then only ever runs below a folder known to take files.
 * Returns the absolute folder.
 * @throws StorageError naming the folder, how it was given, what is wrong and what was expected.
 * @example await prepareDataDir('data', { label: 'demo.yaml: data_dir', campaign: 'demo' })
 */
export async function prepareDataDir(dataDir: string, options: DataDirOptions): Promise<string> {
  const folder = path.resolve(dataDir);
  let at = folder;
  for (;;) {
    const kind = await kindAt(at);
    if (kind === 'folder') break;
    if (kind === 'file') fail(options, folder, at === folder ? 'is a file, not a folder' : `${at} is a file, not a folder`, 'ENOTDIR');
    if (kind === 'other') fail(options, folder, at === folder ? 'is not a folder (a device or a socket)' : `${at} is not a folder`, 'ENOTDIR');
    const parent = path.dirname(at);
    if (parent === at) break;
    at = parent;
  }
  // `at` is the folder itself, or the nearest existing folder above it, where it would be created.
  await probeWrite(at, folder, options);
  if (at === folder && options.campaign !== undefined) {
    const campaignFolder = path.join(folder, 'campaigns', options.campaign);
    for (const sub of [path.join(folder, 'campaigns'), campaignFolder, path.join(campaignFolder, 'results')]) {
      const kind = await kindAt(sub);
      if (kind === 'missing') continue;
      if (kind !== 'folder') fail(options, folder, `${sub} is not a folder`, 'ENOTDIR');
      await probeWrite(sub, folder, options);
    }
  }
  if (at === folder && options.ledger !== false) await checkLedgerFile(folder);
  return folder;
}

/**
 * An output folder (`--out DIR`) checked, and created, before anything is computed or asked: a
 * folder, not a file, on a file system this process can write.
 * @example await prepareOutDir('results/', '--out')
 */
export async function prepareOutDir(out: string, label: string): Promise<string> {
  const folder = await prepareDataDir(out, { label, ledger: false, expected: 'expected a folder you can write in, for the result files' });
  // Below a folder that took the probe: a recursive mkdir cannot loop here.
  await mkdir(folder, { recursive: true });
  return folder;
}

/** The campaigns a data folder holds (`campaigns/<name>/`), sorted; none when it has no such folder. */
export async function campaignsIn(dataDir: string): Promise<string[]> {
  try {
    const entries = await readdir(path.join(dataDir, 'campaigns'), { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch {
    return [];
  }
}
