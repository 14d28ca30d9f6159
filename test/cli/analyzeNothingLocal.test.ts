/**
 * Nothing local in what `sondage analyze` writes or prints: summary.md, report.html, the CSV files
 * and stdout name the campaign and paths relative to the data folder (or the working directory),
 * never the absolute data folder or the home directory — summary.md is meant to be sent by mail.
 */
import { readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { REPO_ROOT, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

let dir: string;
let cleanup: () => Promise<void>;
const startDir = process.cwd();
// Run from the project folder holding the campaign file, as a user does.
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('nothing-local'));
  process.chdir(dir);
});
afterEach(async () => {
  process.chdir(startDir);
  await cleanup();
});

/** A battery's demo made small: its data files by absolute path, the first model (and the judge), two languages. */
async function smallDemo(battery: 'xvalue' | 'ptrue'): Promise<string> {
  const folder = path.join(REPO_ROOT, 'examples', battery);
  const doc = parse(await readFile(path.join(folder, 'demo.yaml'), 'utf8')) as Record<string, unknown> & { design: Record<string, unknown>; models: unknown[] };
  for (const key of ['qa_pairs', 'items']) if (typeof doc.design[key] === 'string') doc.design[key] = path.join(folder, doc.design[key] as string);
  doc.design['languages'] = battery === 'xvalue' ? ['en', 'zh'] : ['en', 'fr'];
  if (battery === 'ptrue') doc.design['verifier_languages'] = ['en', 'fr'];
  doc.models = doc.models.slice(0, 1);
  doc['data_dir'] = 'data';
  const file = path.join(dir, `${battery}.yaml`);
  await writeFile(file, stringify(doc));
  return file;
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** The absolute paths no output may contain: the data folder, the temp folder holding it, the home directory. */
function forbidden(): string[] {
  const home = os.homedir();
  return [path.join(dir, 'data'), dir, ...(home.length > 1 ? [home] : [])];
}

describe('sondage run and analyze name nothing local', () => {
  it.each([
    ['far6', () => writeCampaign(dir, 'small.yaml')],
    ['xvalue', () => smallDemo('xvalue')],
    ['ptrue', () => smallDemo('ptrue')],
  ])('%s: summary.md, report.html, every CSV and what run and analyze print are free of the absolute data folder and the home directory', async (_battery, make) => {
    // Prepare
    const file = await make();
    const ran = await runMain(['run', file]);
    expect(ran.code).toBe(0);
    // Act
    const out = await runMain(['analyze', file]);
    // Assess
    expect(out.code).toBe(0);
    const results = (await filesUnder(path.join(dir, 'data', 'campaigns'))).filter((f) => f.split(path.sep).includes('results'));
    const names = results.map((f) => path.basename(f));
    expect(names).toEqual(expect.arrayContaining(['summary.md', 'report.html']));
    expect(names.some((n) => n.endsWith('.csv'))).toBe(true);
    const texts: [string, string][] = [['run stdout', ran.stdout], ['run stderr', ran.stderr], ['stdout', out.stdout], ['stderr', out.stderr], ...(await Promise.all(results.map(async (f) => [path.basename(f), await readFile(f, 'utf8')] as [string, string])))];
    for (const [name, text] of texts) for (const p of forbidden()) expect(text.includes(p), `${name} contains ${p}`).toBe(false);
    // What they say instead: the campaign's folder relative to the data folder, the results relative to the working directory.
    const summary = texts.find(([n]) => n === 'summary.md')?.[1] ?? '';
    expect(summary).toMatch(/<data folder>\/campaigns\/[a-z0-9-]+\//);
    expect(out.stdout).toMatch(/^results: data\/campaigns\/[a-z0-9-]+\/results$/m);
  });
});
