import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../lib/run/Journal.js';
import { checkLedgerFile, prepareDataDir } from '../../lib/store/dataDir.js';
import { ParquetWriter, removeAbandonedStaging } from '../../lib/store/ParquetWriter.js';
import { describeStorageFailure, StorageError } from '../../lib/store/storageErrors.js';
import { tempDir } from '../helpers/campaigns.js';

// The disk as a source of bad input: a full disk, a journal that cannot be written, a damaged
// ledger, staging folders a kill left behind.

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('storage'));
});
afterEach(() => cleanup());

describe('the reply journal on a disk that fails', () => {
  it('an unwritable journal is reported by `failed` and by close, never as a crash of the process', async () => {
    // A folder where the journal file would go: opening it fails (EISDIR), even for root.
    await mkdir(path.join(dir, 'part.ndjson'));
    const journal = Journal.openSync(dir, 'part.ndjson');
    journal.append({ item_id: 'a' });
    journal.append({ item_id: 'b' });

    const err = await journal.close().catch((e: unknown) => e);

    expect(err).toBeInstanceOf(StorageError);
    expect((err as Error).message).toContain(`could not write ${path.join(dir, 'part.ndjson')}: it is a folder, not a file (EISDIR)`);
    // Not "make the folder writable": it is, and something stands in the file's place.
    expect((err as Error).message).toContain('Move aside what stands at that path, then run the same command again');
    expect(journal.failed).toBeInstanceOf(StorageError);
  });

  it('a journal that cannot be created is known as it is opened, before a call could be made for it', async () => {
    // A partition checks `failed` before it starts each chunk. Known only once the thread pool had
    // run the open, a busy machine let every remaining call go out first (test/run/storageStop.test.ts).
    await mkdir(path.join(dir, 'part.ndjson'));
    const journal = Journal.openSync(dir, 'part.ndjson');

    expect(journal.failed?.message).toContain('(EISDIR)');
    await expect(journal.close()).rejects.toBeInstanceOf(StorageError);
  });
});

describe('staging folders left by a kill', () => {
  it('are removed when a writer starts: a dead process\'s, and an old empty unnamed one; a live writer\'s and a full one are kept', async () => {
    const base = path.join(dir, '.tmp');
    const host = os.hostname();
    const dead = path.join(base, `sondage-parquet-999999999@${host}-Ab12Cd`);
    const live = path.join(base, `sondage-parquet-${process.pid}@${host}-Ef34Gh`);
    const otherHost = path.join(base, 'sondage-parquet-999999999@elsewhere.example-Ij56Kl');
    const legacyEmpty = path.join(base, 'sondage-parquet-Mn78Op');
    const legacyFull = path.join(base, 'sondage-parquet-Qr90St');
    for (const d of [dead, live, otherHost, legacyEmpty, legacyFull]) await mkdir(d, { recursive: true });
    await writeFile(path.join(dead, 'x.ndjson'), '{}\n');
    await writeFile(path.join(legacyFull, 'x.ndjson'), '{}\n');
    const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const d of [legacyEmpty, legacyFull]) await utimes(d, hoursAgo, hoursAgo);

    const kept = [path.basename(otherHost), path.basename(live), path.basename(legacyFull)].sort();

    const writer = await ParquetWriter.create({ tmpDir: base });
    const own = (await readdir(base)).filter((n) => !kept.includes(n));
    await writer.close();

    expect(own).toHaveLength(1);
    expect(own[0]).toMatch(new RegExp(`^sondage-parquet-${process.pid}@`));
    // Its own folder goes on close.
    expect((await readdir(base)).sort()).toEqual(kept);
    expect(await removeAbandonedStaging(path.join(dir, 'absent'))).toBe(0);
  });
});

describe('the ledger file and the data folder, checked before they are used', () => {
  it('an empty ledger file is fine, garbage is named, a folder in its place too', async () => {
    await writeFile(path.join(dir, 'ledger.sqlite'), '');
    await expect(checkLedgerFile(dir)).resolves.toBeUndefined();
    await writeFile(path.join(dir, 'ledger.sqlite'), 'OPENAI_API_KEY=sk-not-a-database');
    await expect(checkLedgerFile(dir)).rejects.toThrow(`${path.join(dir, 'ledger.sqlite')}: the ledger is not a SQLite database`);
    await expect(checkLedgerFile(dir)).rejects.not.toThrow('OPENAI');
  });

  it('accepts a data folder still to be made under a writable one, and creates nothing (a refused campaign leaves no folder)', async () => {
    const deep = path.join(dir, 'a', 'b', 'c');
    await expect(prepareDataDir(deep, { label: '--data-dir', campaign: 'demo' })).resolves.toBe(deep);
    expect(await readdir(dir)).toEqual([]);
  });

  it('words a full disk, a damaged ledger and a DuckDB I/O error; a bug stays a bug', () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', path: '/data/ledger.sqlite-wal' });
    expect(describeStorageFailure(enospc)).toMatch(/^sondage: could not write \/data\/ledger\.sqlite-wal: the disk is full \(ENOSPC\); free some space/);
    const sqlite = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
    expect(describeStorageFailure(sqlite)).toContain('could not write the ledger (ledger.sqlite in the data folder)');
    const duck = new Error('IO Error: Could not write file "/data/x.parquet": No space left on device');
    expect(describeStorageFailure(duck)).toContain('could not write /data/x.parquet: the disk is full (ENOSPC)');
    expect(describeStorageFailure(new TypeError('x is undefined'))).toBeUndefined();
  });
});
