/**
 * The full-size FAR-6 inventory the benchmarks run (Same Judgment, Different Yes §3 at the paper's scale): 8 simulated
 * models × 6 languages × 105 synthetic stories, every question form and answer constraint, both
 * keyings and option orders, repeats 3 × on a seeded share of the prompts, and a simulated judge.
 * One definition for bench/local-throughput, bench/analysis and the AWS cost test, so that the
 * figures they report are of the same campaign.
 */
import { copyFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { syntheticStories } from '../lib/batteries/far6/design/index.js';
import { LANGUAGES } from '../lib/batteries/far6/types.js';

export interface FullSizeOptions {
  readonly name?: string;
  readonly stories?: number;
  readonly models?: number;
  /** Share of the prompts repeated 3 × (default 0.6). */
  readonly repeatFraction?: number;
}

/**
 * Writes `campaign.yaml` (or `<name>.yaml` when `file` is given), its synthetic stories and the
 * example concept pairs into `dir`; returns the campaign file's path.
 */
export async function writeFullSizeCampaign(dir: string, options: FullSizeOptions = {}, file = 'campaign.yaml'): Promise<string> {
  const root = path.resolve(import.meta.dirname, '..');
  await writeFile(path.join(dir, 'stories.yaml'), stringify({ stories: syntheticStories(options.stories ?? 105, LANGUAGES, 7) }));
  await copyFile(path.join(root, 'examples/far6/concept-pairs.yaml'), path.join(dir, 'concept-pairs.yaml'));
  const campaign = {
    name: options.name ?? 'bench',
    seed: 1,
    budget_usd: 1_000_000,
    data_dir: 'data',
    concurrency: 256,
    battery: 'far6',
    design: {
      stories: 'stories.yaml',
      concept_pairs: 'concept-pairs.yaml',
      languages: [...LANGUAGES],
      repeats: { count: 3, fraction: options.repeatFraction ?? 0.6 },
    },
    defaults: { temperature: 1, max_tokens: 120 },
    models: Array.from({ length: options.models ?? 8 }, (_, i) => ({
      id: `m${i + 1}`,
      provider: 'simulated',
      model: `m${i + 1}`,
      price: { input_per_mtok: 0.5, output_per_mtok: 2 },
      simulation: { profile_seed: i + 1 },
    })),
    judge: { id: 'judge', provider: 'simulated', model: 'judge', price: { input_per_mtok: 1, output_per_mtok: 5 } },
  };
  const target = path.join(dir, file);
  await writeFile(target, stringify(campaign));
  return target;
}
