import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type * as FsPromisesModule from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { REPO_ROOT, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { exited, runMain, spawnCli } from '../helpers/cli.js';
import { ledgerSnapshot } from '../helpers/runData.js';

// A data folder (or --out folder) that cannot hold the campaign's data: a file, /dev/null, /proc,
// a read-only folder, another campaign's data, a damaged ledger, a full disk. Each is one sentence
// naming the folder, how it was given and what was expected — no stack trace, exit 1 — and
// nothing already collected is changed.

// A read-only folder cannot be made with chmod when the tests run as root: creating a file under a
// folder named here fails with EROFS, as on a read-only mount (the check creates a probe file).
type FsPromises = typeof FsPromisesModule;
const readOnly = vi.hoisted(() => ({ under: undefined as string | undefined }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<FsPromises>();
  const writeFile = (async (file: Parameters<typeof fs.writeFile>[0], ...rest: unknown[]) => {
    if (readOnly.under !== undefined && typeof file === 'string' && file.startsWith(readOnly.under)) {
      throw Object.assign(new Error(`EROFS: read-only file system, open '${file}'`), { code: 'EROFS', path: file });
    }
    return (fs.writeFile as (...a: unknown[]) => Promise<void>)(file, ...rest);
  }) as typeof fs.writeFile;
  return { ...fs, writeFile, default: { ...fs, writeFile } };
});

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-data-dir'));
});
afterEach(async () => {
  readOnly.under = undefined;
  await cleanup();
});

const EXPECTED = "expected a folder you can write in, for the campaign's data (prompts, replies, the ledger, results)";

async function refused(argv: string[], ...fragments: string[]): Promise<string> {
  const { code, stderr } = await runMain(argv);
  expect(stderr).not.toMatch(/\n\s+at /);
  for (const f of fragments) expect(stderr).toContain(f);
  expect(code).toBe(1);
  return stderr;
}

describe('a data folder that cannot hold the data', () => {
  it('a file, or /dev/null, given as --data-dir or as data_dir: named with how it was given; the file untouched', async () => {
    const file = await writeCampaign(dir, 'small.yaml');
    const notAFolder = path.join(dir, 'notes.txt');
    await writeFile(notAFolder, 'mine');

    await refused(['run', file, '--data-dir', notAFolder], `--data-dir ${notAFolder}: is a file, not a folder; ${EXPECTED}`);
    await refused(['run', file, '--data-dir', path.join(notAFolder, 'sub')], `--data-dir ${path.join(notAFolder, 'sub')}: ${notAFolder} is a file, not a folder`);
    const devNull = await writeCampaign(dir, 'small.yaml', (doc) => {
      doc['data_dir'] = '/dev/null';
    }, 'devnull.yaml');
    await refused(['run', devNull], `${devNull}: data_dir /dev/null: is not a folder (a device or a socket); ${EXPECTED}`);

    expect(await readFile(notAFolder, 'utf8')).toBe('mine');
    expect((await readdir(dir)).sort()).toEqual(['campaign.yaml', 'devnull.yaml', 'notes.txt']);
  });

  it.skipIf(!existsSync('/proc/self'))('data_dir: /proc/self ends at once with exit 1 (it hung, and ignored SIGTERM, in a recursive mkdir)', async () => {
    const file = await writeCampaign(dir, 'small.yaml', (doc) => {
      doc['data_dir'] = '/proc/self';
    });
    const child = spawnCli(['run', file]);
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);

    const code = await exited(child);
    clearTimeout(killer);

    expect(code).toBe(1);
    expect(child.output().stderr).toContain(`${file}: data_dir /proc/self: nothing can be created in /proc/self: it is not an ordinary folder`);
  });

  it('a read-only data folder, or a read-only results folder: refused before anything is asked', async () => {
    const file = await writeCampaign(dir, 'small.yaml');
    const data = path.join(dir, 'data');
    await mkdir(data);
    readOnly.under = data;
    await refused(['run', file], `${file}: data_dir ${data}: cannot create anything in ${data}: the file system is read-only; ${EXPECTED}`);
    // A data folder still to be made is checked where it would be made.
    readOnly.under = dir;
    await refused(['run', file, '--data-dir', path.join(dir, 'new', 'data')], `--data-dir ${path.join(dir, 'new', 'data')}: cannot create anything in ${dir}: the file system is read-only`);

    const results = path.join(data, 'campaigns', 'run-small', 'results');
    await mkdir(results, { recursive: true });
    readOnly.under = results;
    await refused(['run', file], `data_dir ${data}: cannot create anything in ${results}: the file system is read-only`);
    await refused(['analyze', file], `cannot create anything in ${results}: the file system is read-only`);
    // Nothing was started: no ledger, no plan.
    expect(await readdir(data)).toEqual(['campaigns']);
    expect(await readdir(path.join(data, 'campaigns', 'run-small'))).toEqual(['results']);
  });

  it("--data-dir of another campaign: analyze and status say what it holds, and write nothing there", async () => {
    const file = await writeCampaign(dir, 'small.yaml');
    const other = path.join(dir, 'other');
    await mkdir(path.join(other, 'campaigns', 'far6-demo'), { recursive: true });
    await writeFile(path.join(other, 'ledger.sqlite'), '');

    // The folder relative to the working directory: no absolute local path in what a command prints.
    const shown = path.relative(process.cwd(), other);
    await refused(['analyze', file, '--data-dir', other], `sondage analyze: run-small has not run in ${shown} (it holds far6-demo); run it first with \`sondage run ${file}\`, or give the --data-dir it ran with`);
    await refused(['status', file, '--data-dir', other], `sondage status: run-small has not run in ${shown} (it holds far6-demo)`);
    await refused(['status', 'run-small', '--data-dir', other], 'sondage status: run-small has not run');

    expect(await readdir(path.join(other, 'campaigns'))).toEqual(['far6-demo']);
  });

  it('a ledger that is not a database: run, status and stop name it and leave it as it was', async () => {
    const file = await writeCampaign(dir, 'small.yaml');
    const data = path.join(dir, 'data');
    await mkdir(path.join(data, 'campaigns', 'run-small'), { recursive: true });
    const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256));
    const ledger = path.join(data, 'ledger.sqlite');
    await writeFile(ledger, garbage);

    await refused(['run', file], `${ledger}: the ledger is not a SQLite database (it was overwritten or damaged); nothing was changed`);
    await refused(['status', file], `${ledger}: the ledger cannot be opened: it is not a SQLite database (SQLITE_NOTADB)`);
    await refused(['stop', file], `${ledger}: the ledger cannot be opened`);

    expect(Buffer.compare(await readFile(ledger), garbage)).toBe(0);
    expect((await readdir(data)).sort()).toEqual(['campaigns', 'ledger.sqlite']);
  });

  it('analyze --replies --out an existing file: named, nothing read or written', async () => {
    const out = path.join(dir, 'results.txt');
    await writeFile(out, 'mine');

    await refused(['analyze', '--battery', 'far6', '--replies', path.join(REPO_ROOT, 'test/fixtures/byo/sample.jsonl'), '--out', out], `--out ${out}: is a file, not a folder; expected a folder you can write in, for the result files`);

    expect(await readFile(out, 'utf8')).toBe('mine');
  });

  it('a file-size limit (ulimit -f) that cuts a write short: named as such, and the next run completes with nothing lost or paid twice', async () => {
    const file = await writeCampaign(dir, 'small.yaml');
    const data = path.join(dir, 'data');
    // The real binary under a 100 KiB limit per file: the first large write is cut short (the
    // ledger's WAL; before parts went through DuckDB's appender, an NDJSON staging file, which
    // then went on to DuckDB and died on "Malformed JSON").
    const child = spawn('bash', ['-c', `ulimit -f 100; exec "${process.execPath}" bin/sondage.mjs run "${file}" --quiet`], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    expect(await exited(child)).toBe(1);
    expect(stderr).toMatch(/could not write .*\(a (full disk or a )?file-size limit/);
    expect(stderr).toMatch(/then run the same command again[.:] [Ww]hat was committed before is kept/);
    expect(stderr).not.toMatch(/Malformed JSON|\n\s+at /);

    const { code } = await runMain(['run', file, '--quiet']);

    expect(code).toBe(0);
    const after = await ledgerSnapshot(data, 'run-small');
    expect(after.generate.pending + after.judge.pending).toBe(0);
    expect(after.budget.reserved_usd).toBe(0);
    // The same spend as an undisturbed run of this campaign (test/run: $0.54 on small.yaml).
    expect(after.budget.spent_usd).toBeCloseTo(0.54, 2);
    expect((await stat(path.join(data, 'ledger.sqlite'))).size).toBeGreaterThan(0);
  });
});

describe('a data folder inside another campaign folder, or none', () => {
  let dir2: string;
  let cleanup2: () => Promise<void>;
  beforeEach(async () => {
    ({ dir: dir2, cleanup: cleanup2 } = await tempDir('cli-nested-data-dir'));
  });
  afterEach(async () => cleanup2());

  describe('of a completed campaign', () => {
    // One completed run serves both cases: each refused run must leave its ledger as it was.
    let done: { dir: string; cleanup: () => Promise<void> } | undefined;
    let file: string;
    let data: string;
    beforeAll(async () => {
      done = await tempDir('cli-nested-campaign');
      file = await writeCampaign(done.dir, 'small.yaml');
      data = path.join(done.dir, 'data');
      expect((await runMain(['run', file, '--quiet'])).code).toBe(0);
    }, 300_000);
    afterAll(async () => done?.cleanup());

    it.each([['its own folder', 'campaigns/run-small'], ['its results/', 'campaigns/run-small/results']])(
      'run --data-dir at a campaign folder (%s) is refused, naming the data folder, and nothing runs again nested',
      async (_what, inner) => {
        const before = await ledgerSnapshot(data, 'run-small');
        const nested = path.join(data, inner);

        const { code, stderr } = await runMain(['run', file, '--quiet', '--data-dir', nested]);

        expect(code).toBe(1);
        expect(stderr).toContain(`--data-dir ${nested} is inside the data folder ${data} (campaign run-small's own folder)`);
        expect(existsSync(path.join(nested, 'ledger.sqlite'))).toBe(false);
        expect(existsSync(path.join(nested, 'campaigns'))).toBe(false);
        expect(await ledgerSnapshot(data, 'run-small')).toEqual(before);
      },
    );
  });

  it.each(['run', 'status', 'analyze', 'stop', 'purge'])('%s --data-dir= (empty) is refused instead of falling back to data_dir', async (command) => {
    const file = await writeCampaign(dir2, 'small.yaml');
    const { code, stderr } = await runMain([command, file, '--data-dir=']);
    expect(code).toBe(1);
    expect(stderr).toContain(`sondage ${command}: --data-dir is empty`);
    expect(existsSync(path.join(dir2, 'data'))).toBe(false);
  });
});
