/**
 * Each DuckDB instance spills into a folder of its own: DuckDB names its spill files by size class
 * and number only, and an instance that closes deletes every spill file of its folder, so two
 * instances sharing one (two partition threads writing Parquet parts) read each other's blocks as
 * their own — a segfault in the Parquet writer at three times FAR-6's full design.
 */
import { mkdir, readdir, rmdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DuckDb } from '../../lib/store/DuckDb.js';
import { ParquetWriter } from '../../lib/store/ParquetWriter.js';

const SPILL_BASE = path.join(os.tmpdir(), 'sondage-duckdb');

async function spillFolderOf(db: DuckDb): Promise<string> {
  const [row] = await db.all<{ dir: string }>("SELECT current_setting('temp_directory') AS dir");
  return row!.dir;
}

const exists = (p: string) => stat(p).then(() => true, () => false);

describe('DuckDB spill folders', () => {
  it('are one per instance, and go with it', async () => {
    const a = await DuckDb.open();
    const b = await DuckDb.open();
    const [fa, fb] = [await spillFolderOf(a), await spillFolderOf(b)];
    expect(fa).not.toBe(fb);
    for (const f of [fa, fb]) expect(path.dirname(f)).toBe(SPILL_BASE);
    expect(await exists(fa)).toBe(true);
    a.close();
    b.close();
    expect(await exists(fa)).toBe(false);
    expect(await exists(fb)).toBe(false);
    // The Parquet writer's instance too (other processes may add and remove folders meanwhile:
    // this one's are named after its pid).
    const ours = async () => (await readdir(SPILL_BASE)).filter((f) => f.startsWith(`spill-${process.pid}@`));
    const before = await ours();
    const writer = await ParquetWriter.create();
    const its = (await ours()).filter((f) => !before.includes(f));
    expect(its).toHaveLength(1);
    await writer.close();
    expect(await ours()).not.toContain(its[0]);
  });

  it('an instance whose neighbour spilled and closed reads its own spilled table whole', async () => {
    const rows = 400_000;
    // A table of ~60 MB under a 24 MB limit: most of it lives in spill files.
    const fill = `CREATE TABLE t AS SELECT i, repeat(md5(i::VARCHAR), 4) AS s FROM range(${rows}) r(i)`;
    const expected = { n: rows, total: rows * 128 };
    const a = await DuckDb.open({ memoryLimit: '24MB', threads: 1 });
    try {
      await a.run(fill);
      const b = await DuckDb.open({ memoryLimit: '24MB', threads: 1 });
      await b.run(fill);
      b.close();
      const [got] = await a.all<{ n: number; total: number }>('SELECT count(*) AS n, sum(length(s)) AS total FROM t');
      expect(got).toEqual(expected);
    } finally {
      a.close();
    }
  });

  it('a folder left by a killed process is removed by the next instance; one of a live process is kept', async () => {
    await mkdir(SPILL_BASE, { recursive: true });
    const dead = path.join(SPILL_BASE, `spill-999999999@${os.hostname()}-AbCdEf`);
    const live = path.join(SPILL_BASE, `spill-${process.pid}@${os.hostname()}-GhIjKl`);
    await mkdir(dead);
    await mkdir(live);
    const db = await DuckDb.open();
    db.close();
    expect(await exists(dead)).toBe(false);
    expect(await exists(live)).toBe(true);
    await rmdir(live);
  });
});
