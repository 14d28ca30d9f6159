/**
 * A campaign whose readings were checked against the design and which nothing touched since is not
 * checked again (lib/run/readingsChecked.ts); anything the check depends on — the design's data,
 * a part added, a readings part rewritten — makes the next analysis check every partition again.
 */
import { cp, readdir, readFile, rename, rm, writeFile, copyFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readingsCheckDigest } from '../../lib/run/readingsChecked.js';
import { loadContext, REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

const tmp = useTempDir('readings-checked', 'all');
let folder: string;
let file: string;
const CAMPAIGN = 'ptrue-demo';

beforeAll(async () => {
  folder = path.join(tmp.dir, 'ptrue');
  await cp(path.join(REPO_ROOT, 'examples', 'ptrue'), folder, { recursive: true });
  file = path.join(folder, 'demo.yaml');
  const text = (await readFile(file, 'utf8')).replace(/^data_dir: .*$/m, 'data_dir: ./data').replace(/languages: \[en, zh, fr, ja, ko, hi\]/g, 'languages: [en, fr]');
  expect(text).toContain('languages: [en, fr]');
  await writeFile(file, text);
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
