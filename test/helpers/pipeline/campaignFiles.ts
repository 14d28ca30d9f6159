/**
 * Campaign files for the pipeline tests, each in a folder of its own with the data files it names
 * beside it (relative paths, as `sondage start --aws` requires) and `data_dir: data`, so that the
 * same file runs locally (`runCampaign`) and is uploaded for the state machine.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { REPO_ROOT, RUN_FIXTURES } from '../campaigns.js';
import type { CampaignDoc } from '../campaigns.js';

/** Writes `doc` as `<dir>/campaign.yaml` with `data_dir: data`; returns the file. */
async function write(dir: string, doc: Record<string, unknown>): Promise<string> {
  const file = path.join(dir, 'campaign.yaml');
  await writeFile(file, stringify({ ...doc, data_dir: 'data' }));
  return file;
}

/** test/fixtures/run/small.yaml (FAR-6) named `name`, its stories and concept pairs copied beside it, edited. */
export async function far6Campaign(dir: string, name: string, edit: (doc: CampaignDoc) => void = () => {}): Promise<string> {
  const doc = parse(await readFile(path.join(RUN_FIXTURES, 'small.yaml'), 'utf8')) as CampaignDoc;
  for (const f of ['stories.yaml', 'concept-pairs.yaml']) await copyFile(path.join(REPO_ROOT, 'examples/far6', f), path.join(dir, f));
  doc['name'] = name;
  doc.design['stories'] = 'stories.yaml';
  doc.design['concept_pairs'] = 'concept-pairs.yaml';
  edit(doc);
  return write(dir, doc);
}

/** The FAR-6 design cut to one language, one story and one form: a campaign small enough to deploy in every test. */
export function oneStoryFar6(doc: CampaignDoc): void {
  doc.design['languages'] = ['en'];
  doc.design['story_limit'] = 1;
  doc.design['forms'] = ['plain'];
}

/**
 * oneStoryFar6 in shards of 20 items (rpm 6), so that a worker batch holds several shards and
 * parts: the smallest campaign in which a worker can stop between two of its parts. The judge
 * reads half the replies.
 */
export function severalPartsFar6(doc: CampaignDoc): void {
  oneStoryFar6(doc);
  for (const m of doc.models) m['rpm'] = 6;
  doc.judge['sample_rate'] = 0.5;
}

/** An example campaign (`examples/<battery>/demo.yaml`) with the data files it names, named `name`, edited. */
export async function exampleCampaign(dir: string, battery: 'xvalue' | 'ptrue', name: string, files: readonly string[], edit: (doc: CampaignDoc) => void): Promise<string> {
  const doc = parse(await readFile(path.join(REPO_ROOT, 'examples', battery, 'demo.yaml'), 'utf8')) as CampaignDoc;
  for (const f of files) await copyFile(path.join(REPO_ROOT, 'examples', battery, f), path.join(dir, f));
  doc['name'] = name;
  edit(doc);
  return write(dir, doc);
}

/** A campaign document written as is (a battery without data files, such as the tests' relay). */
export function plainCampaign(dir: string, doc: Record<string, unknown>): Promise<string> {
  return write(dir, doc);
}
