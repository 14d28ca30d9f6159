/**
 * The FAR-6 golden test: what the battery produces, pinned while the core moves around it (issue
 * "Batteries as plug-ins"). Item ids and prompt keys of the demo and of a full-size synthetic
 * design, the judge and audit item ids of a simulated run, every results file of that run, the
 * SQL texts (local and Athena), and the Parquet columns of the three tables. A change here is a
 * change of behaviour: regenerate with `UPDATE_GOLDEN=1 npx vitest run test/batteries/far6/golden` only in a
 * commit that says why.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../../../lib/run/runCampaign.js';
import { DuckDb, readParquetSql } from '../../../../lib/store/index.js';
import { goldenByo, goldenCampaignExpansion, goldenExpansion, goldenSqlRenders } from './far6Surface.js';
import { loadContext, REPO_ROOT, tempDir, writeCampaign } from '../../../helpers/campaigns.js';

const GOLDEN_FILE = path.join(REPO_ROOT, 'test/batteries/far6/golden/far6.golden.json');
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

type Golden = Record<string, unknown>;

const sha = (text: string | Uint8Array): string => createHash('sha256').update(text).digest('hex');

const found: Golden = {};
let golden: Golden = {};

/** Compares one pinned value; under UPDATE_GOLDEN=1 records it instead. */
function pin(key: string, value: unknown): void {
  found[key] = value;
  if (!UPDATE) expect(value, `golden ${key}`).toEqual(golden[key]);
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.relative(dir, path.join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

let root: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  if (!UPDATE) {
    if (!existsSync(GOLDEN_FILE)) throw new Error(`${GOLDEN_FILE} is missing; create it with UPDATE_GOLDEN=1`);
    golden = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as Golden;
  }
  ({ dir: root, cleanup } = await tempDir('golden-far6'));
});

afterAll(async () => {
  if (UPDATE) writeFileSync(GOLDEN_FILE, `${JSON.stringify(found, null, 2)}\n`);
  await cleanup();
});

describe('FAR-6 golden values', () => {
  it('expands the demo campaign to the same item ids and prompt keys', async () => {
    const ctx = await loadContext(path.join(REPO_ROOT, 'examples/far6/demo.yaml'));
    const lines = goldenCampaignExpansion(ctx);
    pin('demo.expansion', { items: lines.length, sha256: sha(lines.join('\n')) });
  });

  it('expands the full-size synthetic design (repeats, story_limit) to the same ids', async () => {
    const full = await goldenExpansion(root, {});
    pin('synthetic.full', { items: full.length, sha256: sha(full.join('\n')) });
    const limited = await goldenExpansion(root, { storyLimit: 12 });
    pin('synthetic.story_limit', { items: limited.length, sha256: sha(limited.join('\n')) });
  }, 120_000);

  it('renders the same SQL locally and on Athena', () => {
    pin('sql', goldenSqlRenders());
  });

  it('runs a cut-down demo to the same judge and audit ids, Parquet columns and results files', async () => {
    const file = await writeCampaign(root, 'small.yaml', (doc) => {
      const demo = path.join(REPO_ROOT, 'examples/far6');
      doc.design = {
        stories: path.join(demo, 'stories.yaml'),
        concept_pairs: path.join(demo, 'concept-pairs.yaml'),
        languages: ['en', 'ja'],
        forms: ['plain', 'negint', 'alternative', 'ornot'],
        constraints: ['free', 'verdict', 'yesno', 'label'],
        repeats: { count: 3, fraction: 0.25 },
      };
      doc.models = [
        { id: 'alpha', provider: 'simulated', model: 'alpha', price: { input_per_mtok: 0.25, output_per_mtok: 1.25 }, simulation: { profile_seed: 1, keying_bias: -0.12 } },
        { id: 'beta', provider: 'simulated', model: 'beta', price: { input_per_mtok: 3, output_per_mtok: 15 }, simulation: { profile_seed: 2, negint_truth_mapping: { ja: 0.9 } } },
      ];
      doc.judge = {
        id: 'judge',
        provider: 'simulated',
        model: 'judge',
        price: { input_per_mtok: 1, output_per_mtok: 5 },
        settings: { temperature: 0, max_tokens: 200 },
        simulation: { error_rate: 0.03 },
        sample_rate: 0.04,
        audit: {
          per_stratum: 10,
          retest: true,
          second_judge: { id: 'judge-b', provider: 'simulated', model: 'judge-b', price: { input_per_mtok: 1, output_per_mtok: 5 }, simulation: { error_rate: 0.06 } },
        },
      };
      doc.budget_usd = 100;
    });
    const dataDir = path.join(root, 'data');
    const summary = await runCampaign(await loadContext(file), { dataDir });
    expect(summary.stopped).toBeUndefined();
    const campaignDir = path.join(dataDir, 'campaigns', summary.campaign);

    const db = await DuckDb.open();
    try {
      for (const phase of ['judge', 'audit-second', 'audit-retest']) {
        const rows = await db.all<{ item_id: string }>(
          `SELECT DISTINCT item_id FROM ${readParquetSql(path.join(campaignDir, phase, 'prompts/**/*.parquet'))} ORDER BY item_id`,
        );
        pin(`run.${phase}.item_ids`, { items: rows.length, sha256: sha(rows.map((r) => r.item_id).join('\n')) });
      }
      const columns: Record<string, string[]> = {};
      for (const table of ['prompts', 'replies', 'readings']) {
        const described = await db.all<{ column_name: string; column_type: string }>(
          `DESCRIBE SELECT * FROM read_parquet('${path.join(campaignDir, 'generate', table, '**/*.parquet')}', hive_partitioning = false)`,
        );
        columns[table] = described.map((c) => `${c.column_name} ${c.column_type}`);
      }
      pin('parquet.columns', columns);
    } finally {
      db.close();
    }

    const results = path.join(campaignDir, 'results');
    const hashes: Record<string, string> = {};
    for (const name of await filesUnder(results)) {
      // summary.md and report.html name the data folder, a temporary one here.
      const text = (await readFile(path.join(results, name), 'utf8')).replaceAll(dataDir, '<data>');
      hashes[name] = sha(text);
    }
    pin('run.results', hashes);
  }, 120_000);

  it('analyses bring-your-own replies to the same results files', async () => {
    for (const sample of ['sample.jsonl', 'sample.csv']) {
      const out = path.join(root, `byo-${sample}`);
      await goldenByo(path.join(REPO_ROOT, 'test/fixtures/byo', sample), out);
      const hashes: Record<string, string> = {};
      for (const name of await filesUnder(out)) {
        // The import's own files (what was read and refused) are not result files of the analysis.
        if (name.startsWith('tables/') || name === 'byo_manifest.json' || name === 'import_issues.csv') continue;
        // summary.md and report.html name the replies file, which lies under the clone's own folder.
        const text = (await readFile(path.join(out, name), 'utf8')).replaceAll(root, '<root>');
        hashes[name] = sha(text.replaceAll(REPO_ROOT, '<repo>'));
      }
      pin(`byo.${sample}`, hashes);
    }
  }, 60_000);
});
