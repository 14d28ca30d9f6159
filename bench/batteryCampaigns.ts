/**
 * Scaled-up campaigns of the X-Value and P(True) demos for the benchmarks: the demos' simulated
 * models on many more items, made by replicating the example data under new ids (X-Value's pairs
 * also spread over all 14 languages of the paper's Table 9). The science of the copies is the
 * examples'; only the scale changes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { LANGUAGES as XVALUE_LANGUAGES } from '../lib/batteries/xvalue/types.js';

const ROOT = path.resolve(import.meta.dirname, '..');

type Demo = Record<string, unknown> & { models: Record<string, unknown>[] };

async function demo(battery: string): Promise<Demo> {
  return parse(await readFile(path.join(ROOT, 'examples', battery, 'demo.yaml'), 'utf8')) as Demo;
}

async function jsonl(file: string): Promise<Record<string, unknown>[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The demo's models, cycled to `n` (ids m1 … mn, each with a demo model's simulation block). */
function models(demoModels: readonly Record<string, unknown>[], n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({ ...demoModels[i % demoModels.length], id: `m${i + 1}`, model: `m${i + 1}` }));
}

/**
 * The battery's demo as `<battery>-bench.yaml` in `dir`: its design replaced by `design(demo)`,
 * its models cycled to `modelCount`, a budget and concurrency no benchmark reaches. Returns the file.
 */
async function writeBenchCampaign(dir: string, battery: string, design: (demo: Demo) => Record<string, unknown>, modelCount: number): Promise<string> {
  const d = await demo(battery);
  const file = path.join(dir, `${battery}-bench.yaml`);
  await writeFile(
    file,
    stringify({
      ...d,
      name: `${battery}-bench`,
      budget_usd: 1_000_000,
      data_dir: 'data',
      concurrency: 256,
      design: design(d),
      models: models(d.models, modelCount),
    }),
  );
  return file;
}

/**
 * X-Value with `pairs` QA pairs over the 14 languages and 7 categories, the rubric only (or both
 * strategies), on `models` simulated judges. Returns the campaign file.
 */
export async function writeXvalueCampaign(dir: string, opts: { readonly pairs: number; readonly models: number; readonly strategies: readonly string[] }): Promise<string> {
  const examples = await jsonl(path.join(ROOT, 'examples/xvalue/qa-pairs.jsonl'));
  const lines: string[] = [];
  for (let i = 0; i < opts.pairs; i++) {
    const base = examples[i % examples.length]!;
    lines.push(JSON.stringify({ ...base, id: `syn-${i}`, language: XVALUE_LANGUAGES[Math.floor(i / examples.length) % XVALUE_LANGUAGES.length] }));
  }
  await writeFile(path.join(dir, 'qa-pairs.jsonl'), `${lines.join('\n')}\n`);
  return writeBenchCampaign(dir, 'xvalue', () => ({ qa_pairs: 'qa-pairs.jsonl', strategies: opts.strategies }), opts.models);
}

/** P(True) with `items` base items (the 30 examples replicated) on `models` simulated models and the demo's judge. */
export async function writePtrueCampaign(dir: string, opts: { readonly items: number; readonly models: number }): Promise<string> {
  const examples = await jsonl(path.join(ROOT, 'examples/ptrue/items.jsonl'));
  const lines = Array.from({ length: opts.items }, (_, i) => JSON.stringify({ ...examples[i % examples.length], id: `syn-${i}` }));
  await writeFile(path.join(dir, 'items.jsonl'), `${lines.join('\n')}\n`);
  return writeBenchCampaign(dir, 'ptrue', (d) => ({ ...(d['design'] as Record<string, unknown>), items: 'items.jsonl' }), opts.models);
}
