import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import type { RunOptions } from '../../lib/run/runTypes.js';
import { PROMPTS_PART, promptsFileName, writePromptsFiles } from '../../lib/run/promptsPart.js';
import { LocalBlobStore, ParquetWriter, readParquet, tableGlob } from '../../lib/store/index.js';
import { partitionPrefix } from '../../lib/store/layout.js';
import { promptColumns } from '../../lib/store/schemas.js';
import type { PromptRow } from '../../lib/store/schemas.js';
import { loadContext, tempDir, writeCutFar6Demo } from '../helpers/campaigns.js';
import { readResults } from '../helpers/runData.js';

// "What must hold": a partition's prompts part goes on in continuation files past `partRows` rows
// (lib/run/promptsPart.ts), so that the writer never holds a whole large partition's prompts; the
// files are one table to every reader, and a rewrite leaves none of an earlier, longer part.

const CAMPAIGN = 'far6-demo';
const PHASES = ['generate', 'judge', 'audit-second', 'audit-retest'];
/** Rows per part: a few files per generate and judge partition of the cut demo. */
const PART_ROWS = 60;

let root: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('prompts-parts'));
});

afterAll(() => cleanup?.());

/** The names of the files in one prompts partition's folder, sorted. */
async function promptFiles(dataDir: string, phase: string, model: string, language: string): Promise<string[]> {
  const folder = path.join(dataDir, partitionPrefix(CAMPAIGN, phase, 'prompts', model, language));
  return (await readdir(folder).catch(() => [] as string[])).sort();
}

/** A table's rows of every partition, each as JSON, sorted. */
async function tableRows(dataDir: string, phase: string): Promise<string[]> {
  const rows = await readParquet(tableGlob(dataDir, CAMPAIGN, phase, 'prompts'), 'SELECT * FROM parts');
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))).sort();
}

describe('writePromptsFiles', () => {
  const columns = { factors: [], extras: [], extraRow: () => ({}) };
  const row = (i: number): PromptRow => ({
    item_id: `id-${String(i).padStart(3, '0')}`,
    prompt_key: `key-${i}`,
    campaign: CAMPAIGN,
    phase: 'generate',
    model: 'alpha',
    language: 'en',
    battery: 'far6',
    messages_json: JSON.stringify([{ role: 'user', content: `prompt ${i}` }]),
    settings_json: '{}',
    source_item_id: null,
  });
  const rows = (n: number): PromptRow[] => Array.from({ length: n }, (_, i) => row(i));
  async function* slowly(list: readonly PromptRow[]): AsyncGenerator<PromptRow> {
    for (const r of list) {
      await new Promise((resolve) => setImmediate(resolve));
      yield r;
    }
  }

  it('writes files of at most fileRows rows in order, and a shorter rewrite deletes the files past its last', async () => {
    const dataDir = path.join(root, 'unit');
    const store = new LocalBlobStore(dataDir);
    const writer = await ParquetWriter.create();
    const target = { campaign: CAMPAIGN, phase: 'generate', model: 'alpha', language: 'en' as const, partName: PROMPTS_PART };
    const options = { trusted: true, columns: promptColumns(columns) };
    const files = () => promptFiles(dataDir, 'generate', 'alpha', 'en');
    const stored = async (name: string) => (await readParquet<{ item_id: string }>(path.join(dataDir, partitionPrefix(CAMPAIGN, 'generate', 'prompts', 'alpha', 'en'), name), 'SELECT item_id FROM parts')).map((r) => r.item_id);
    try {
      // Files of other parts in the folder (an AWS shard's, a name that only looks alike) are not the part's.
      await store.put(`${partitionPrefix(CAMPAIGN, 'generate', 'prompts', 'alpha', 'en')}part-plan-0-2000.parquet`, 'x');
      await store.put(`${partitionPrefix(CAMPAIGN, 'generate', 'prompts', 'alpha', 'en')}part-plan.01.parquet`, 'x');

      expect(await writePromptsFiles(writer, store, target, rows(7), options, 3)).toBe(7);
      expect(await files()).toEqual(['part-plan-0-2000.parquet', 'part-plan.01.parquet', 'part-plan.1.parquet', 'part-plan.2.parquet', 'part-plan.parquet']);
      expect(await stored('part-plan.parquet')).toEqual(['id-000', 'id-001', 'id-002']);
      expect(await stored('part-plan.1.parquet')).toEqual(['id-003', 'id-004', 'id-005']);
      expect(await stored('part-plan.2.parquet')).toEqual(['id-006']);

      // Rows that come asynchronously, as a one-pass partition's do; exactly two files' worth.
      expect(await writePromptsFiles(writer, store, target, slowly(rows(6)), options, 3)).toBe(6);
      expect(await files()).toEqual(['part-plan-0-2000.parquet', 'part-plan.01.parquet', 'part-plan.1.parquet', 'part-plan.parquet']);
      expect(await stored('part-plan.1.parquet')).toEqual(['id-003', 'id-004', 'id-005']);

      expect(await writePromptsFiles(writer, store, target, rows(2), options, 3)).toBe(2);
      expect(await files()).toEqual(['part-plan-0-2000.parquet', 'part-plan.01.parquet', 'part-plan.parquet']);

      // No rows: no file of the part is left.
      expect(await writePromptsFiles(writer, store, target, slowly([]), options, 3)).toBe(0);
      expect(await files()).toEqual(['part-plan-0-2000.parquet', 'part-plan.01.parquet']);
    } finally {
      await writer.close();
    }
  });

  it('names file k of a part after the part', () => {
    expect(promptsFileName('part-plan.parquet', 0)).toBe('part-plan.parquet');
    expect(promptsFileName('part-plan.parquet', 12)).toBe('part-plan.12.parquet');
    expect(promptsFileName('part-plan-0-2000.parquet', 1)).toBe('part-plan-0-2000.1.parquet');
  });
});

describe("a run's prompts parts in files of partRows rows", () => {
  async function run(file: string, dataDir: string, opts: Omit<RunOptions, 'dataDir'> = {}) {
    return runCampaign(await loadContext(file, dataDir), { dataDir, threads: 1, sliceSources: 5, ...opts });
  }

  it('store the prompts of one file, read as one table; a design that shrinks a partition leaves no file of the larger one', async () => {
    const three = await writeCutFar6Demo(path.join(root, 'far6-cut3.yaml'), 3, ['en', 'de']);
    const two = await writeCutFar6Demo(path.join(root, 'far6-cut2.yaml'), 2, ['en', 'de']);
    const whole = path.join(root, 'whole');
    const cut = path.join(root, 'cut');
    // One pass (an unbegun partition) in the first run; the two-pass way when the design changes.
    expect((await run(three, whole)).stopped).toBeUndefined();
    expect((await run(three, cut, { partRows: PART_ROWS })).stopped).toBeUndefined();

    const generateFiles = await promptFiles(cut, 'generate', 'alpha', 'en');
    const judgeFiles = await promptFiles(cut, 'judge', 'alpha', 'en');
    expect(generateFiles.length).toBeGreaterThan(3);
    expect(judgeFiles.length).toBeGreaterThan(1);
    expect(generateFiles).toContain('part-plan.1.parquet');
    expect(await promptFiles(whole, 'generate', 'alpha', 'en')).toEqual(['part-plan.parquet']);
    for (const phase of PHASES) expect(await tableRows(cut, phase), phase).toEqual(await tableRows(whole, phase));
    expect(await readResults(cut, CAMPAIGN)).toEqual(await readResults(whole, CAMPAIGN));

    // The digest covers every file: a second run writes none of them again.
    const again = await run(three, cut, { partRows: PART_ROWS });
    expect(again.phases.map((p) => p.done)).toEqual(PHASES.map(() => 0));

    // Two stories instead of three: each partition's prompts rewritten, in fewer files, as a fresh run of the edited design stores them.
    const fresh = path.join(root, 'fresh-two');
    expect((await run(two, fresh, { partRows: PART_ROWS })).stopped).toBeUndefined();
    expect((await run(two, cut, { partRows: PART_ROWS })).stopped).toBeUndefined();
    for (const phase of PHASES) expect(await tableRows(cut, phase), phase).toEqual(await tableRows(fresh, phase));
    const fewer = await promptFiles(cut, 'generate', 'alpha', 'en');
    expect(fewer.length).toBeLessThan(generateFiles.length);
    expect(fewer).toEqual(await promptFiles(fresh, 'generate', 'alpha', 'en'));
  }, 180_000);
});
