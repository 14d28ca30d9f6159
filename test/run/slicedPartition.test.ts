import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PhaseSpec } from '../../lib/battery/types.js';
import type { RunContext } from '../../lib/run/context.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import type { RunOptions } from '../../lib/run/runTypes.js';
import type { ReplyRow } from '../../lib/store/types.js';
import { loadContext, tempDir, writeCutFar6Demo } from '../helpers/campaigns.js';
import { costOf, journalDir, readResults, storedReplies } from '../helpers/runData.js';
import { expectSameAsReference, okItemIds, takeReference, type RunReference } from '../helpers/runReference.js';

// "What must hold": a dependent phase's partition asked a slice of its source items at a time
// (lib/run/slicedItems.ts) never expands its items from more than one slice of them, and asks,
// stores, charges and adopts exactly what the whole partition does.

const DEMO_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../examples/ptrue');
const CAMPAIGN = 'ptrue-demo';
const TABLES = ['cells.csv', 'regimes.csv', 'axes.csv', 'qr.csv', 'accuracy_shares.csv', 'reliability.csv', 'compliance.csv', 'scorers.csv', 'matching_effects.csv'];
/**
 * 90 generate items per partition in the demo cut to three languages (cutPtrueDemo): 13 slices, the
 * last one short.
 */
const SLICE = 7;

interface Reference extends RunReference<'generate' | 'verify' | 'judge'> {
  /** alpha/en's successful verify replies, in the order they were asked. */
  readonly alphaEnVerify: ReplyRow[];
}

let root: string;
let cleanup: () => Promise<void>;
let ref: Reference;
let demo: string;

/**
 * The P(True) demo in three question, response and verifier languages instead of six: every phase
 * and reader of the demo, an eighth of its verify replies, and partitions still many slices long.
 */
async function cutPtrueDemo(dir: string): Promise<string> {
  await cp(DEMO_DIR, dir, { recursive: true });
  const file = path.join(dir, 'demo.yaml');
  const text = await readFile(file, 'utf8');
  const cut = text.replaceAll('[en, zh, fr, ja, ko, hi]', '[en, zh, fr]');
  expect(cut.match(/\[en, zh, fr\]/g)).toHaveLength(2);
  await writeFile(file, cut);
  return file;
}

/** Runs the demo on the main thread, each dependent phase's expansion watched: the most source items one expansion read. */
async function run(dataDir: string, opts: Omit<RunOptions, 'dataDir'> = {}): Promise<{ summary: Awaited<ReturnType<typeof runCampaign>>; mostSources: number }> {
  const ctx: RunContext = await loadContext(demo, dataDir);
  let mostSources = 0;
  for (const name of ['verify', 'judge']) {
    const phase = ctx.graph.get(name) as { expand: PhaseSpec['expand'] };
    const expand = phase.expand;
    phase.expand = (p, up) => {
      mostSources = Math.max(mostSources, p.items('generate').length);
      return expand(p, up);
    };
  }
  const summary = await runCampaign(ctx, { dataDir, threads: 1, ...opts });
  return { summary, mostSources };
}

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('sliced'));
  demo = await cutPtrueDemo(path.join(root, 'ptrue-demo'));
  const dataDir = path.join(root, 'whole');
  const alphaEnVerify: ReplyRow[] = [];
  const { summary, mostSources } = await run(dataDir, {
    onReply: (row) => {
      if (row.phase === 'verify' && row.model === 'alpha' && row.language === 'en' && row.status === 'ok') alphaEnVerify.push(row);
    },
  });
  expect(summary.stopped).toBeUndefined();
  // The reference asks whole partitions: its 90 source items are under the default slice.
  expect(mostSources).toBe(90);
  ref = { ...(await takeReference(dataDir, CAMPAIGN, summary.spentUsd, ['generate', 'verify', 'judge'], TABLES)), alphaEnVerify };
  expect(ref.ok.verify.length).toBe(2430);
  // Ten slices' worth of replies (a slice's 7 items, each verified in 3 languages): the test below
  // keeps 50 of the first slices and 50 of the last ones.
  expect(alphaEnVerify.length).toBeGreaterThan(SLICE * 3 * 10);
}, 120_000);

afterAll(() => cleanup?.());

describe('a dependent partition asked in slices of its source items', () => {
  it('expands verify and judge from one slice at a time and ends as the whole partition does; a second run asks nothing', async () => {
    const dataDir = path.join(root, 'sliced');
    const { summary, mostSources } = await run(dataDir, { sliceSources: SLICE });
    expect(summary.stopped).toBeUndefined();
    expect(mostSources).toBe(SLICE);
    expect(summary.phases.map((p) => [p.phase, p.items, p.done])).toEqual([
      ['generate', 810, 810],
      ['verify', 2430, 2430],
      ['judge', 486, 486],
    ]);
    await expectSameAsReference(dataDir, ref);
    const stored = (await storedReplies(dataDir, CAMPAIGN, 'verify')).filter((r) => r.status === 'ok');
    expect(costOf(stored)).toBeGreaterThan(0);

    const again = await run(dataDir, { sliceSources: SLICE });
    expect(again.summary.phases.map((p) => p.done)).toEqual([0, 0, 0]);
    expect(again.summary.spentUsd).toBe(summary.spentUsd);
  }, 120_000);

  it("adopts a killed run's verify journal whose replies span several slices: not asked again, counted once", async () => {
    const dataDir = path.join(root, 'journal');
    // Replies of the first slices and of the last ones: their items are expanded from different slices.
    const kept = [...ref.alphaEnVerify.slice(0, 50), ...ref.alphaEnVerify.slice(-50)];
    const dir = journalDir(dataDir, CAMPAIGN, 'verify', 'alpha', 'en');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, '20200101T000000-dead00-verify-00000.ndjson'), `${kept.map((r) => JSON.stringify(r)).join('\n')}\n`);

    const asked = new Set<string>();
    const { summary, mostSources } = await run(dataDir, {
      sliceSources: SLICE,
      onReply: (row) => {
        if (row.phase === 'verify') asked.add(row.item_id);
      },
    });
    expect(summary.stopped).toBeUndefined();
    // Each adopted reply's item was looked up in its own slice, not in the partition expanded whole.
    expect(mostSources).toBe(SLICE);
    expect(summary.phases.find((p) => p.phase === 'verify')!.adopted).toBe(kept.length);
    expect(kept.filter((r) => asked.has(r.item_id))).toEqual([]);
    expect(asked.size).toBe(ref.ok.verify.length - kept.length);
    await expectSameAsReference(dataDir, ref);
  }, 120_000);
});

// FAR-6's judge reads generate's replies and writes its readings into generate's folder: the same
// property holds for a phase that reads one reply per source item and keeps readings of its own.
describe('FAR-6\'s judge asked in slices of its source items', () => {
  it('stores, charges and reports what the whole partitions do', async () => {
    // The demo cut to three stories: its partitions still hold many times a slice's source items.
    const file = await writeCutFar6Demo(path.join(root, 'far6-sliced.yaml'), 3);
    const results = async (dataDir: string, opts: Omit<RunOptions, 'dataDir'>) => {
      const ctx = await loadContext(file, dataDir);
      let mostSources = 0;
      const judge = ctx.graph.get('judge') as { expand: PhaseSpec['expand'] };
      const expand = judge.expand;
      judge.expand = (p, up) => {
        mostSources = Math.max(mostSources, p.items('generate').length);
        return expand(p, up);
      };
      const summary = await runCampaign(ctx, { dataDir, threads: 1, ...opts });
      expect(summary.stopped).toBeUndefined();
      return { summary, mostSources, files: await readResults(dataDir, 'far6-demo'), judged: await okItemIds(dataDir, 'far6-demo', 'judge') };
    };
    const whole = await results(path.join(root, 'far6-whole'), {});
    const sliced = await results(path.join(root, 'far6-sliced'), { sliceSources: 5 });
    expect(whole.mostSources).toBeGreaterThan(4 * 5);
    expect(sliced.mostSources).toBe(5);
    expect(sliced.judged.length).toBeGreaterThan(0);
    expect(sliced.judged).toEqual(whole.judged);
    expect(sliced.summary.spentUsd).toBeCloseTo(whole.summary.spentUsd, 10);
    expect([...sliced.files.keys()].sort()).toEqual([...whole.files.keys()].sort());
    for (const [name, text] of whole.files) expect(sliced.files.get(name), name).toBe(text);
  }, 120_000);
});
