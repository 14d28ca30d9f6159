/**
 * A campaign whose readings were checked against the design and which nothing touched since is not
 * checked again (lib/run/readingsChecked.ts); anything the check depends on — the design's data,
 * a part added, a readings part rewritten — makes the next analysis check every partition again.
 * A run that visited every partition counts as a check; one stopped by the budget does not.
 */
import { cp, readdir, readFile, rename, rm, writeFile, copyFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readingsCheckDigest, readingsCheckedAlready } from '../../lib/run/readingsChecked.js';
import { LocalBlobStore } from '../../lib/store/LocalBlobStore.js';
import { loadContext, REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

const tmp = useTempDir('readings-checked', 'all');
let folder: string;
let file: string;
const CAMPAIGN = 'ptrue-demo';

/** A copy of the P(True) example in `name`, on two languages, its data inside the copy; returns the campaign file. */
async function example(name: string, budget?: number): Promise<string> {
  const dir = path.join(tmp.dir, name);
  await cp(path.join(REPO_ROOT, 'examples', 'ptrue'), dir, { recursive: true });
  const campaignFile = path.join(dir, 'demo.yaml');
  let text = (await readFile(campaignFile, 'utf8')).replace(/^data_dir: .*$/m, 'data_dir: ./data').replace(/languages: \[en, zh, fr, ja, ko, hi\]/g, 'languages: [en, fr]');
  if (budget !== undefined) text = text.replace(/^budget_usd: .*$/m, `budget_usd: ${budget}`);
  expect(text).toContain('languages: [en, fr]');
  await writeFile(campaignFile, text);
  return campaignFile;
}

async function checked(campaignFile: string): Promise<boolean> {
  const dataDir = path.join(path.dirname(campaignFile), 'data');
  return readingsCheckedAlready(new LocalBlobStore(dataDir), CAMPAIGN, await readingsCheckDigest(await loadContext(campaignFile), dataDir));
}

beforeAll(async () => {
  file = await example('ptrue');
  folder = path.dirname(file);
  expect((await runMain(['run', file, '--quiet'])).code).toBe(0);
}, 120_000);

const campaignDir = (): string => path.join(folder, 'data', 'campaigns', CAMPAIGN);

/** The per-partition digests a full check writes (lib/run/refreshReadings.ts): gone, they say whether a check ran. */
async function partitionDigests(): Promise<string[]> {
  const dir = path.join(campaignDir(), 'generate', '_readings');
  return (await readdir(dir, { recursive: true })).filter((n) => n.endsWith('read_with.digest')).map((n) => path.join(dir, n));
}

async function firstPart(table: 'replies' | 'readings'): Promise<string> {
  const dir = path.join(campaignDir(), 'generate', table);
  const name = (await readdir(dir, { recursive: true })).filter((n) => n.endsWith('.parquet')).sort()[0];
  expect(name).toBeDefined();
  return path.join(dir, name!);
}

describe('an analysis of a campaign checked before', () => {
  it('a run that visited every partition counts as a check; one the budget stopped does not', async () => {
    expect(await checked(file)).toBe(true);
    const stopped = await example('ptrue-stopped', 0.002);
    const run = await runMain(['run', stopped, '--quiet', '--allow-partial']);
    // Exit 3: stopped at the cap, the judge phase never visited.
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/stopped at the budget cap/);
    expect(await checked(stopped)).toBe(false);
  }, 120_000);

  it('checks nothing while nothing changed, and every partition again once the design data is corrected', async () => {
    expect((await runMain(['analyze', file])).code).toBe(0);
    const digests = await partitionDigests();
    expect(digests.length).toBeGreaterThan(0);

    // A full check would write these again; one passed over leaves them gone.
    for (const d of digests) await rm(d);
    const again = await runMain(['analyze', file]);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toMatch(/re-read/);
    expect(await partitionDigests()).toEqual([]);

    const items = path.join(folder, 'items.jsonl');
    const text = await readFile(items, 'utf8');
    const corrected = text.replace(/("id": "mmmlu-01".*?"answer": )"B"/, '$1"C"');
    expect(corrected).not.toBe(text);
    await writeFile(items, corrected);
    const after = await runMain(['analyze', file]);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/generate: re-read \d+ stored reading\(s\)/);
    expect((await partitionDigests()).length).toBe(digests.length);
  }, 120_000);

  it('checks again once a replies part is added or a readings part is rewritten in place', async () => {
    const ctx = await loadContext(file);
    const dataDir = path.join(folder, 'data');
    const checked = await readingsCheckDigest(ctx, dataDir);
    expect(await readingsCheckDigest(ctx, dataDir)).toBe(checked);

    // A readings part written anew with the same name, as a run under another design does.
    const readings = await firstPart('readings');
    await copyFile(readings, `${readings}.new`);
    await rename(`${readings}.new`, readings);
    const rewritten = await readingsCheckDigest(ctx, dataDir);
    expect(rewritten).not.toBe(checked);

    // A replies part added (a run that asked more).
    const replies = await firstPart('replies');
    await copyFile(replies, path.join(path.dirname(replies), 'extra.parquet'));
    expect(await readingsCheckDigest(ctx, dataDir)).not.toBe(rewritten);
    await rm(path.join(path.dirname(replies), 'extra.parquet'));
    expect(await readingsCheckDigest(ctx, dataDir)).toBe(rewritten);
  });
});
