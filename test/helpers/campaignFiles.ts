/**
 * Campaign fixtures for tests and benches: temp folders, fixture copies, design cuts. Free of vitest,
 * so that a bench script can import it (campaigns.ts adds the vitest hooks).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { loadRunContext } from '../../lib/run/context.js';
import type { RunContext } from '../../lib/run/runCampaign.js';
import { PartitionItems } from '../../lib/run/partitionItems.js';
import type { PromptItem } from '../../lib/core/types.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const RUN_FIXTURES = path.join(REPO_ROOT, 'test/fixtures/run');

/** A campaign document as YAML gives it back: edited in place by tests. */
export type CampaignDoc = Record<string, unknown> & {
  budget_usd: number;
  concurrency?: number;
  design: Record<string, unknown>;
  models: Record<string, unknown>[];
  judge: Record<string, unknown>;
};

/** A fresh folder under the OS temp dir, and a function that removes it. */
export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `sondage-${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Copies a campaign fixture of test/fixtures/run into `dir` as `name`, with its design files made
 * absolute (they are relative to the fixture's folder), `data_dir: data` (inside `dir`) and the
 * caller's edits. Returns the new file's path.
 */
export async function writeCampaign(
  dir: string,
  fixture: string,
  edit: (doc: CampaignDoc) => void = () => {},
  name = 'campaign.yaml',
): Promise<string> {
  const source = path.join(RUN_FIXTURES, fixture);
  const doc = parse(await readFile(source, 'utf8')) as CampaignDoc;
  for (const key of ['stories', 'concept_pairs']) {
    const value = doc.design[key];
    if (typeof value === 'string') doc.design[key] = path.resolve(path.dirname(source), value);
  }
  doc['data_dir'] = 'data';
  edit(doc);
  const file = path.join(dir, name);
  await writeFile(file, stringify(doc));
  return file;
}

/** Writes a campaign written out in full by the test as `<name>.yaml` in `dir`. Returns the file's path. */
export async function writeCampaignDoc(dir: string, doc: Record<string, unknown> & { name: string }): Promise<string> {
  const file = path.join(dir, `${doc.name}.yaml`);
  await writeFile(file, stringify(doc));
  return file;
}

/** Sets a `simulation:` key on every respondent of the campaign. */
export function simulateOnModels(doc: CampaignDoc, settings: Record<string, unknown>): void {
  for (const m of doc.models) m['simulation'] = { ...(m['simulation'] as Record<string, unknown> | undefined), ...settings };
}

/**
 * Narrows a FAR-6 campaign document to the small factorial most tests run: the given forms,
 * constraints and number of stories, in English unless `languages` says otherwise.
 */
export function narrowDesign(
  doc: CampaignDoc,
  cut: { forms: readonly string[]; constraints: readonly string[]; stories: number; languages?: readonly string[] },
): void {
  doc.design['languages'] = [...(cut.languages ?? ['en'])];
  doc.design['forms'] = [...cut.forms];
  doc.design['constraints'] = [...cut.constraints];
  doc.design['story_limit'] = cut.stories;
}

/**
 * FAR-6's demo campaign cut to `stories` stories, written to `file`: every factor of the demo, each
 * partition still holding hundreds of items (more than a small slice); in `languages` only, where given.
 */
export async function writeCutFar6Demo(file: string, stories: number, languages?: readonly string[]): Promise<string> {
  const demo = path.join(REPO_ROOT, 'examples/far6/demo.yaml');
  const doc = parse(await readFile(demo, 'utf8')) as { design: Record<string, unknown> };
  for (const [key, value] of Object.entries(doc.design)) {
    if (typeof value === 'string' && /\.(ya?ml|jsonl|csv)$/.test(value)) doc.design[key] = path.join(path.dirname(demo), value);
  }
  doc.design['story_limit'] = stories;
  if (languages) doc.design['languages'] = [...languages];
  await writeFile(file, stringify(doc));
  return file;
}

/** FAR-6 at its smallest: English, the plain form, yes/no, two stories, no repeats (a handful of calls). */
export function smallestDesign(doc: CampaignDoc): void {
  narrowDesign(doc, { forms: ['plain'], constraints: ['yesno'], stories: 2 });
  doc.design['repeats'] = { count: 1, fraction: 0 };
}

/** The campaign and its battery, loaded as `sondage run` loads them. */
export function loadContext(file: string, dataDir?: string): Promise<RunContext> {
  return loadRunContext(file, dataDir);
}

/** The items of a root phase (default `generate`) of one model and language, as the run expands them. */
export function rootItems(ctx: RunContext, model: RunContext['campaign']['models'][number], language: string, phase = 'generate'): readonly PromptItem[] {
  return new PartitionItems({ ctx, model, language }).items(phase);
}
