/**
 * Stored readings follow the design as it stands (lib/run/refreshReadings.ts). A design corrected
 * between runs — a P(True) gold letter, a FAR-6 verdict form — is read again from the stored
 * replies by the next run, at no cost, and the results equal those of a fresh reading of the same
 * replies: the same data folder with every stored reading removed, run with the corrected design.
 */
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readParquetRows } from '../../lib/store/JsParquet.js';
import { runMain } from '../helpers/cli.js';
import { REPO_ROOT, tempDir } from '../helpers/campaigns.js';

let root: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  root = await tempDir('fresh-readings');
});
afterAll(async () => root.cleanup());

/** A copy of an example folder whose campaign keeps its data inside the copy. */
async function example(name: 'ptrue' | 'far6', as: string): Promise<{ folder: string; file: string }> {
  const folder = path.join(root.dir, as);
  await cp(path.join(REPO_ROOT, 'examples', name), folder, { recursive: true });
  const file = path.join(folder, 'demo.yaml');
  await writeFile(file, (await readFile(file, 'utf8')).replace(/^data_dir: .*$/m, 'data_dir: ./data'));
  return { folder, file };
}

async function edit(file: string, from: string | RegExp, to: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const next = text.replace(from, to);
  expect(next).not.toBe(text);
  await writeFile(file, next);
}

/** Every file under `dir` (relative path → bytes as text), so that two data folders' results compare whole. */
async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out.set(path.relative(dir, full), await readFile(full, 'utf8'));
  }
  return out;
}

/** The results of a campaign, without the lines that name the data folder or the time. */
async function results(folder: string, campaign: string): Promise<Map<string, string>> {
  const files = await filesUnder(path.join(folder, 'data', 'campaigns', campaign, 'results'));
  for (const [name, text] of files) {
    files.set(name, text.split(folder).join('<folder>').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>'));
  }
  return files;
}

/** Removes every stored reading and the digests that say what they were read with. */
async function dropReadings(folder: string, campaign: string): Promise<void> {
  const base = path.join(folder, 'data', 'campaigns', campaign);
  for (const entry of await readdir(base, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const phase = entry.name;
    await rm(path.join(base, phase, 'readings'), { recursive: true, force: true });
    await rm(path.join(base, phase, '_readings'), { recursive: true, force: true });
  }
}

async function readingRowsOf(folder: string, campaign: string, phase: string): Promise<Record<string, unknown>[]> {
  const dir = path.join(folder, 'data', 'campaigns', campaign, phase, 'readings');
  const rows: Record<string, unknown>[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.parquet')) rows.push(...(await readParquetRows(path.join(entry.parentPath, entry.name))));
  }
  return rows;
}

describe('a corrected design is read again from the stored replies', () => {
  it('P(True): a gold letter corrected from B to C is read again by analyze, and the results equal a fresh reading of the same replies', async () => {
    const a = await example('ptrue', 'ptrue-a');
    expect((await runMain(['run', a.file, '--quiet'])).code).toBe(0);
    const before = await results(a.folder, 'ptrue-demo');
    // B: the same replies, to be read afresh under the corrected design.
    const b = { folder: path.join(root.dir, 'ptrue-b'), file: path.join(root.dir, 'ptrue-b', 'demo.yaml') };
    await cp(a.folder, b.folder, { recursive: true });

    for (const x of [a, b]) await edit(path.join(x.folder, 'items.jsonl'), /("id": "mmmlu-01".*?"answer": )"B"/, '$1"C"');
    // `analyze` reads them again as `run` would, without a call.
    const second = await runMain(['analyze', a.file]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/generate: re-read \d+ stored reading\(s\).*; [1-9]\d* now read differently/);
    const after = await results(a.folder, 'ptrue-demo');
    expect(after).not.toEqual(before);

    await dropReadings(b.folder, 'ptrue-demo');
    expect((await runMain(['run', b.file, '--quiet'])).code).toBe(0);
    expect(after).toEqual(await results(b.folder, 'ptrue-demo'));

    // A run after it finds nothing to ask and nothing to read again, and says nothing about it.
    const third = await runMain(['run', a.file, '--quiet']);
    expect(third.code).toBe(0);
    expect(third.stderr).toMatch(/generate: 0 new/);
    expect(third.stdout).not.toMatch(/re-read/);
    expect(await results(a.folder, 'ptrue-demo')).toEqual(after);
  });

  it('FAR-6: a verdict form added to concept-pairs.yaml reaches the stored rule readings through the next run, as in a fresh reading', async () => {
    const a = await example('far6', 'far6-a');
    expect((await runMain(['run', a.file, '--quiet'])).code).toBe(0);
    const b = { folder: path.join(root.dir, 'far6-b'), file: path.join(root.dir, 'far6-b', 'demo.yaml') };
    await cp(a.folder, b.folder, { recursive: true });
    const rule = (rows: Record<string, unknown>[]) => rows.filter((r) => r['reader'] === 'rule');
    const ruleBefore = rule(await readingRowsOf(a.folder, 'far6-demo', 'generate'));

    // English "wrong" gains "it depends" as a verdict form of its reference side: the simulated
    // both-sides replies that open with it now read as that side.
    const form = /(- id: en\.wrong-right\n(?:.*\n)*?\s+reference:\n\s+verdict: wrong\n)/;
    for (const x of [a, b]) await edit(path.join(x.folder, 'concept-pairs.yaml'), form, '$1      verdict_forms: [it depends]\n');
    const second = await runMain(['run', a.file, '--quiet']);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/generate: re-read \d+ stored reading\(s\)/);
    const ruleAfter = rule(await readingRowsOf(a.folder, 'far6-demo', 'generate'));
    expect(ruleAfter).toHaveLength(ruleBefore.length);
    expect(ruleAfter.every((r) => typeof r['read_with'] === 'string')).toBe(true);
    // Every reading that changed is counted in the notice (the token rule's and the others').
    const labels = (rows: Record<string, unknown>[]) => new Map(rows.map((r) => [`${r['item_id']} ${r['reader']} ${r['judge_item_id']}`, r['label']]));
    const was = labels(await readingRowsOf(b.folder, 'far6-demo', 'generate'));
    const now = labels(await readingRowsOf(a.folder, 'far6-demo', 'generate'));
    const flipped = [...now].filter(([key, label]) => was.get(key) !== label);
    expect(flipped.length).toBeGreaterThan(0);
    expect(second.stdout).toMatch(new RegExp(`; ${flipped.length} now read differently`));

    await dropReadings(b.folder, 'far6-demo');
    expect((await runMain(['run', b.file, '--quiet'])).code).toBe(0);
    expect(await results(a.folder, 'far6-demo')).toEqual(await results(b.folder, 'far6-demo'));
  });
});
