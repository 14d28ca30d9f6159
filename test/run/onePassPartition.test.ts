import Database from 'better-sqlite3';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PhaseSpec } from '../../lib/battery/types.js';
import type { PromptItem } from '../../lib/core/types.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import type { RunOptions } from '../../lib/run/runTypes.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import { loadContext, tempDir, writeCutFar6Demo } from '../helpers/campaigns.js';
import { filesUnder, readResults } from '../helpers/runData.js';
import { okItemIds } from '../helpers/runReference.js';

// "What must hold": a partition no run has begun is asked in one pass over its slices
// (lib/run/onePassPartition.ts) — a root partition never expanded whole before it is asked, a
// dependent one expanded once, not twice — and leaves the data folder as the two-pass way does:
// the same prompts, replies, readings, digests, ledger records and results.

const CAMPAIGN = 'far6-demo';
const PHASES = ['generate', 'judge', 'audit-second', 'audit-retest'];
/** Root items, and judge source items, per slice: the demo cut to three stories has many of each per partition. */
const SLICE = 5;

let root: string;
let cleanup: () => Promise<void>;
let file: string;

interface Watched {
  readonly summary: Awaited<ReturnType<typeof runCampaign>>;
  /** How many times the run built each judge slice (each set of source items the judge's expand read). */
  readonly judgeExpansions: readonly number[];
  /** alpha/en's generate items expanded for its generate partition when its first reply came back, and in all. */
  readonly expandedAtFirstReply: number;
  readonly expanded: number;
}

/** Runs the cut demo on the main thread, generate's and the judge's expansions watched. */
async function run(dataDir: string, opts: Omit<RunOptions, 'dataDir'> = {}): Promise<Watched> {
  const ctx = await loadContext(file, dataDir);
  const judgeSlices = new Map<string, number>();
  let expanded = 0;
  let expandedAtFirstReply = -1;
  let watching = false;
  const judge = ctx.graph.get('judge') as { expand: PhaseSpec['expand'] };
  const expandJudge = judge.expand;
  judge.expand = (p, up) => {
    // A slice by its partition and its first source item.
    const key = `${p.subject.id}/${p.language}/${p.items('generate')[0]?.item_id ?? ''}`;
    if (!p.planning) judgeSlices.set(key, (judgeSlices.get(key) ?? 0) + 1);
    return expandJudge(p, up);
  };
  const generate = ctx.graph.get('generate') as { expand: PhaseSpec['expand'] };
  const expandGenerate = generate.expand;
  generate.expand = (p, up) => {
    const items = expandGenerate(p, up);
    // The generate partition's own expansion, the first after the plan's (the judge's and the audits' come later).
    if (p.subject.id !== 'alpha' || p.language !== 'en' || p.planning || watching) return items;
    watching = true;
    return (function* (): Generator<PromptItem> {
      for (const item of items) {
        expanded++;
        yield item;
      }
    })();
  };
  const summary = await runCampaign(ctx, {
    dataDir,
    threads: 1,
    sliceSources: SLICE,
    ...opts,
    onReply: (row) => {
      if (expandedAtFirstReply < 0 && row.phase === 'generate' && row.model === 'alpha' && row.language === 'en') expandedAtFirstReply = expanded;
      opts.onReply?.(row);
    },
  });
  return { summary, judgeExpansions: [...judgeSlices.values()], expandedAtFirstReply, expanded };
}

/** A table's rows of every partition, each as JSON, sorted: what a run stored, not the order it stored it in. */
async function tableRows(dataDir: string, phase: string, table: 'prompts' | 'readings', columns: string): Promise<string[]> {
  const rows = await readParquet(tableGlob(dataDir, CAMPAIGN, phase, table), `SELECT ${columns} FROM parts`);
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))).sort();
}

/**
 * The digests kept beside the tables (prompts parts', readings'), by path under the campaign; not
 * the campaign's `_readings/checked.digest`, which hashes the files' times and inodes too.
 */
async function digests(dataDir: string): Promise<Map<string, string>> {
  const base = path.join(dataDir, 'campaigns', CAMPAIGN);
  const out = new Map<string, string>();
  for (const f of await filesUnder(base, (name) => name.endsWith('.digest'))) {
    const key = path.relative(base, f);
    if (key !== path.join('_readings', 'checked.digest')) out.set(key, await readFile(f, 'utf8'));
  }
  return out;
}

/** The ledger's partition records: each registered partition's size and ids' digest. */
function partitionRecords(dataDir: string): unknown[] {
  const db = new Database(path.join(dataDir, 'ledger.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT phase, model, language, items, digest FROM partitions WHERE campaign = ? ORDER BY phase, model, language').all(CAMPAIGN);
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('one-pass'));
  file = await writeCutFar6Demo(path.join(root, 'far6-cut.yaml'), 3);
});

afterAll(() => cleanup?.());

describe('an unbegun partition asked in one pass', () => {
  it('stores the prompts, replies, readings, digests, ledger records and results of the two-pass way, expanding each slice once', async () => {
    const two = path.join(root, 'two-pass');
    const one = path.join(root, 'one-pass');
    const twoPass = await run(two, { onePass: false });
    const onePass = await run(one);
    expect(twoPass.summary.stopped).toBeUndefined();
    expect(onePass.summary.stopped).toBeUndefined();

    // The two-pass way expands alpha/en's generate items whole before its first call, and each
    // judge slice twice (to index it, then to ask it); one pass asks the first slice first, and
    // builds each judge slice once.
    expect(twoPass.expandedAtFirstReply).toBe(twoPass.expanded);
    expect(onePass.expanded).toBe(twoPass.expanded);
    expect(onePass.expanded).toBeGreaterThan(4 * SLICE);
    expect(onePass.expandedAtFirstReply).toBeLessThanOrEqual(2 * SLICE);
    expect(onePass.judgeExpansions.length).toBeGreaterThan(18);
    expect(onePass.judgeExpansions.every((n) => n === 1)).toBe(true);
    expect(twoPass.judgeExpansions.length).toBe(onePass.judgeExpansions.length);
    expect(twoPass.judgeExpansions.filter((n) => n === 2).length).toBeGreaterThan(onePass.judgeExpansions.length / 2);

    // Costs are sums of doubles in the order the replies came back: equal to the last few bits.
    const counts = (w: Watched) => w.summary.phases.map(({ costUsd: _cost, ...p }) => p);
    expect(counts(onePass)).toEqual(counts(twoPass));
    onePass.summary.phases.forEach((p, i) => expect(p.costUsd).toBeCloseTo(twoPass.summary.phases[i]!.costUsd, 10));
    expect(onePass.summary.spentUsd).toBeCloseTo(twoPass.summary.spentUsd, 10);
    for (const phase of PHASES) {
      expect(await okItemIds(one, CAMPAIGN, phase), phase).toEqual(await okItemIds(two, CAMPAIGN, phase));
      const prompts = await tableRows(one, phase, 'prompts', '*');
      expect(prompts.length, phase).toBeGreaterThan(0);
      expect(prompts, `${phase} prompts`).toEqual(await tableRows(two, phase, 'prompts', '*'));
    }
    // The judge's readings are stored in generate's folder, beside generate's own.
    const readingColumns = 'item_id, model, language, reader, facet, label, value, raw, judge_item_id, read_with';
    for (const phase of ['generate', 'audit-second', 'audit-retest']) {
      expect(await tableRows(one, phase, 'readings', readingColumns), `${phase} readings`).toEqual(await tableRows(two, phase, 'readings', readingColumns));
    }
    const marks = await digests(one);
    expect([...marks.keys()].some((k) => k.includes('/_readings/'))).toBe(true);
    expect([...marks.keys()].some((k) => k.includes('/_prompts/'))).toBe(true);
    expect(marks).toEqual(await digests(two));
    expect(partitionRecords(one)).toEqual(partitionRecords(two));
    expect(await readResults(one, CAMPAIGN)).toEqual(await readResults(two, CAMPAIGN));

    // The digests hold: a second run finds every partition registered and read under this design.
    const again = await run(one);
    expect(again.summary.phases.map((p) => [p.done, p.reread ?? 0])).toEqual(PHASES.map(() => [0, 0]));
  }, 120_000);

  // The first test's two-pass run is the reference here.
  it('stopped in the middle of a pass, leaves each partition it began registered and staged whole; the next run ends as an uninterrupted one', async () => {
    const reference = path.join(root, 'two-pass');
    const dataDir = path.join(root, 'aborted');
    const controller = new AbortController();
    let replies = 0;
    const first = await run(dataDir, {
      signal: controller.signal,
      onReply: (row) => {
        if (row.phase === 'generate' && ++replies === 300) controller.abort();
      },
    });
    expect(first.summary.stopped).toBe('aborted');
    const begun = partitionRecords(dataDir) as { phase: string; model: string; language: string }[];
    const asked = first.summary.phases[0]!.done;
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThan(first.expanded);
    // The partitions the abort cut short have their ledger records and every prompt row of the
    // reference's; those it never began have neither.
    expect(begun.length).toBeGreaterThan(0);
    expect(begun.every((r) => r.phase === 'generate')).toBe(true);
    const referenceRecords = partitionRecords(reference) as typeof begun;
    for (const r of begun) expect(referenceRecords).toContainEqual(r);
    const ofPartition = (rows: string[], r: { model: string; language: string }) =>
      rows.filter((row) => {
        const o = JSON.parse(row) as { model: string; language: string };
        return o.model === r.model && o.language === r.language;
      });
    const prompts = await tableRows(dataDir, 'generate', 'prompts', '*');
    const referencePrompts = await tableRows(reference, 'generate', 'prompts', '*');
    expect(prompts.length).toBe(begun.reduce((n, r) => n + ofPartition(referencePrompts, r).length, 0));
    for (const r of begun) expect(ofPartition(prompts, r), `${r.model}/${r.language}`).toEqual(ofPartition(referencePrompts, r));

    const second = await run(dataDir);
    expect(second.summary.stopped).toBeUndefined();
    for (const phase of PHASES) {
      expect(await okItemIds(dataDir, CAMPAIGN, phase), phase).toEqual(await okItemIds(reference, CAMPAIGN, phase));
      expect(await tableRows(dataDir, phase, 'prompts', '*'), `${phase} prompts`).toEqual(await tableRows(reference, phase, 'prompts', '*'));
    }
    expect(partitionRecords(dataDir)).toEqual(referenceRecords);
    expect(await readResults(dataDir, CAMPAIGN)).toEqual(await readResults(reference, CAMPAIGN));
  }, 120_000);
});
