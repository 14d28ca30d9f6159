/**
 * The P(True) and X-Value demos with their partitions in two threads (partitionThreads.ts) ask,
 * store, charge and conclude exactly what the one-thread run does: every phase's answered items,
 * the spend, and every results file. (FAR-6's case is test/run/partitionThreads.test.ts.)
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, REPO_ROOT, tempDir } from '../helpers/campaigns.js';
import { costOf, okCounts, readResults, storedReplies } from '../helpers/runData.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('battery-threads'));
});
afterAll(async () => cleanup());

/** The battery's demo on its first model only (its data files by absolute path), to keep the runs short. */
async function oneModelDemo(demo: string, dataFile: string): Promise<string> {
  const folder = path.join(REPO_ROOT, 'examples', demo);
  const doc = parse(await readFile(path.join(folder, 'demo.yaml'), 'utf8')) as { design: Record<string, unknown>; models: unknown[] };
  doc.design[dataFile] = path.join(folder, doc.design[dataFile] as string);
  doc.models = doc.models.slice(0, 1);
  const file = path.join(root, `${demo}.yaml`);
  await writeFile(file, stringify(doc));
  return file;
}

/**
 * X-Value's demo on its first model with its 70 pairs dealt over eight languages: enough for two
 * threads to split them (partitionThreads.ts splitLanguages), each loading only its own.
 */
async function xvalueEightLanguages(): Promise<string> {
  const file = await oneModelDemo('xvalue', 'qa_pairs');
  const doc = parse(await readFile(file, 'utf8')) as { design: Record<string, unknown> };
  const pairs = (await readFile(doc.design['qa_pairs'] as string, 'utf8')).trim().split('\n');
  const dealt = pairs.map((line, i) => JSON.stringify({ ...JSON.parse(line), language: EIGHT[i % EIGHT.length] }));
  const data = path.join(root, 'xvalue-eight.jsonl');
  await writeFile(data, `${dealt.join('\n')}\n`);
  doc.design['qa_pairs'] = data;
  delete doc.design['languages'];
  const out = path.join(root, 'xvalue-eight.yaml');
  await writeFile(out, stringify(doc));
  return out;
}
const EIGHT = ['ar', 'de', 'en', 'es', 'fr', 'ja', 'ru', 'zh'];

async function runIn(file: string, dataDir: string, threads: number) {
  const log: string[] = [];
  const ctx = await loadContext(file, dataDir);
  const summary = await runCampaign(ctx, { dataDir, threads, log: (line) => log.push(line) });
  expect(summary.stopped).toBeUndefined();
  const phases: Record<string, { answered: string[]; answeredTwice: number; storedCost: number }> = {};
  for (const phase of ctx.graph.phases.map((p) => p.name)) {
    const rows = await storedReplies(dataDir, ctx.campaign.name, phase);
    const ok = okCounts(rows);
    phases[phase] = { answered: [...ok.keys()].sort(), answeredTwice: [...ok.values()].filter((n) => n > 1).length, storedCost: costOf(rows) };
  }
  return { summary, log, phases, results: await readResults(dataDir, ctx.campaign.name) };
}

describe.each([
  ['ptrue', () => oneModelDemo('ptrue', 'items')],
  ['xvalue', () => oneModelDemo('xvalue', 'qa_pairs')],
  // Two threads, each with four of the languages: a partition runs on the thread holding its language.
  ['xvalue-eight-languages', xvalueEightLanguages],
])('the %s demo in partition threads', (demo, campaignFile) => {
  it('asks, stores, charges and concludes exactly what one thread does', { timeout: 240_000 }, async () => {
    const file = await campaignFile();
    const one = await runIn(file, path.join(root, demo, 'one'), 1);
    const two = await runIn(file, path.join(root, demo, 'two'), 2);
    expect(one.log).not.toContain('partitions run in 2 threads (--threads 1: on one)');
    expect(two.log).toContain('partitions run in 2 threads (--threads 1: on one)');
    expect(Object.keys(two.phases)).toEqual(Object.keys(one.phases));
    for (const [phase, p] of Object.entries(one.phases)) {
      expect(p.answered.length, phase).toBeGreaterThan(0);
      expect(two.phases[phase]!.answered, phase).toEqual(p.answered);
      expect(two.phases[phase]!.answeredTwice, phase).toBe(0);
      expect(two.phases[phase]!.storedCost, phase).toBeCloseTo(p.storedCost, 9);
    }
    expect(two.summary.spentUsd).toBeCloseTo(one.summary.spentUsd, 9);
    expect(one.results.size).toBeGreaterThan(0);
    expect([...two.results.keys()].sort()).toEqual([...one.results.keys()].sort());
    for (const [name, text] of one.results) expect(two.results.get(name), name).toBe(text);
  });
});
