/**
 * On AWS, stored readings follow the design as it stands: the synthesized state machine with the
 * real handlers over the stand-ins (test/helpers/pipeline/), a campaign run, its design corrected
 * and uploaded again, and a second execution. The corrected design's readings are read again from
 * the stored replies (free), the judge items whose prompts the correction changed are asked (paid,
 * within the cap), and the report equals the local run of the same correction on the same replies
 * (which test/run/freshReadings.test.ts holds equal to a fresh reading). The readings it leaves
 * equal a fresh reading of the same replies in the bucket: every reading dropped, a third
 * execution reads them all again, and neither the readings nor the tables move.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rereadNoticeOf } from '../../lib/run/rereadStoredReadings.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import type { RunSummary } from '../../lib/run/runCampaign.js';
import { layout, readParquet, tableGlob } from '../../lib/store/index.js';
import { loadContext, tempDir } from '../helpers/campaigns.js';
import { asRemote } from '../helpers/localSource.js';
import { exampleCampaign, far6Campaign } from '../helpers/pipeline/campaignFiles.js';
import { startPipeline } from '../helpers/pipeline/pipelineHarness.js';
import type { Pipeline } from '../helpers/pipeline/pipelineHarness.js';

let p: Pipeline;
let root: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('pipeline-rereads'));
  p = await startPipeline();
}, 60_000);

afterAll(async () => {
  await p?.close();
  await cleanup();
});

async function edit(file: string, from: string | RegExp, to: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const next = text.replace(from, to);
  expect(next, `${file} holds what the test corrects`).not.toBe(text);
  await writeFile(file, next);
}

/** The local run of the campaign file as it stands now, in its own data folder (a second run resumes it). */
async function runLocally(file: string): Promise<{ summary: RunSummary; dataDir: string; name: string }> {
  const ctx = await loadContext(file);
  const summary = await runCampaign(ctx, { dataDir: ctx.dataDir });
  expect(summary.stopped).toBeUndefined();
  return { summary, dataDir: ctx.dataDir, name: ctx.campaign.name };
}

async function localResults(dataDir: string, name: string): Promise<Map<string, string>> {
  const folder = path.join(dataDir, layout.campaignPrefix(name), 'results');
  const out = new Map<string, string>();
  for (const f of (await readdir(folder)).sort()) out.set(f, await readFile(path.join(folder, f), 'utf8'));
  return out;
}

/** The report's files as the local run's would read with the bucket as their source. */
function expectSameAsLocal(aws: Map<string, string>, local: Map<string, string>, name: string): void {
  const source = `s3://${p.standIns.names.bucket}/campaigns/${name}/`;
  expect([...aws.keys()].sort()).toEqual([...local.keys()].sort());
  for (const [file, text] of aws) expect(text === asRemote(local.get(file)!, name, source), `${file} differs from the local run's`).toBe(true);
}

/**
 * Every stored reading of a phase folder in the bucket, as sorted lines (the fingerprints included),
 * but those of judge items the design no longer has: a correction that changes a judge's prompt
 * leaves the replies and readings of the judge items it replaced stored (nothing paid is thrown
 * away), and no query joins them to a prompt of the design (the tables compared say so).
 */
async function bucketReadings(name: string, phase: string, phases: readonly string[]): Promise<string[]> {
  const dir = await p.localCopy(name);
  const rows = await readParquet<Record<string, unknown>>(tableGlob(dir, name, phase, 'readings'), 'SELECT * FROM parts');
  const judged = new Set<unknown>();
  for (const judge of phases.filter((f) => f === 'judge')) {
    for (const r of await readParquet<{ item_id: string }>(tableGlob(dir, name, judge, 'prompts'), 'SELECT item_id FROM parts')) judged.add(r.item_id);
  }
  return rows
    .filter((r) => r['judge_item_id'] === null || judged.has(r['judge_item_id']))
    .map((r) => JSON.stringify(Object.entries(r).sort(([a], [b]) => a.localeCompare(b))))
    .sort();
}

/** Item ids with a successful reply, per phase: the bucket's and a local data folder's. */
async function answered(dir: string, name: string, phases: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const phase of phases) {
    const rows = await readParquet<{ item_id: string }>(tableGlob(dir, name, phase, 'replies'), "SELECT item_id FROM parts WHERE status = 'ok'");
    out[phase] = rows.map((r) => r.item_id).sort();
  }
  return out;
}

/** Drops every stored reading of the campaign in the bucket, and the markers that say under which design they were read. */
async function dropBucketReadings(name: string): Promise<number> {
  const keys = (await p.store.list(`campaigns/${name}/`)).filter((k) => /\/(readings|_readings)\//.test(k));
  for (const key of keys) await p.store.delete(key);
  return keys.length;
}

interface Correction {
  readonly label: string;
  readonly write: (dir: string) => Promise<string>;
  /** Corrects the design file(s) beside the campaign file. */
  readonly correct: (dir: string) => Promise<void>;
  /** Phases whose stored readings are stored in their own folder (the readings tables compared). */
  readonly readingFolders: readonly string[];
  /** Lines the second execution's notice must hold. */
  readonly notice: readonly RegExp[];
  /** Whether the correction changes prompts of a paid phase (new judge items asked). */
  readonly paid: boolean;
}

const corrections: Correction[] = [
  {
    label: "P(True): mmmlu-01's gold letter corrected from B to C (multiple choice judged too)",
    write: (dir) =>
      exampleCampaign(dir, 'ptrue', 'reread-ptrue', ['items.jsonl'], (doc) => {
        doc.design['languages'] = ['en', 'fr'];
        doc.design['verifier_languages'] = ['en', 'fr'];
        doc.design['item_limit'] = 1;
        // The judge's prompt holds the reference answer: the corrected letter makes new judge items.
        doc.design['judge_multiple_choice'] = true;
        (doc.design['analysis'] as Record<string, unknown>)['bootstrap_draws'] = 20;
      }),
    correct: (dir) => edit(path.join(dir, 'items.jsonl'), /("id": "mmmlu-01".*?"answer": )"B"/, '$1"C"'),
    readingFolders: ['generate', 'verify'],
    notice: [/^generate: re-read \d+ stored reading\(s\).*; [1-9]\d* now read differently$/, /^verify: re-read \d+ stored reading\(s\)/, /^judge: [1-9]\d* shard\(s\) settled under an earlier design listed again/],
    paid: true,
  },
  {
    label: 'FAR-6: a verdict form added to concept-pairs.yaml',
    write: (dir) =>
      far6Campaign(dir, 'reread-far6', (doc) => {
        // The verdict constraint: replies that answer with a verdict word, which verdict_forms read.
        doc.design['constraints'] = ['free', 'verdict'];
        doc.design['languages'] = ['en'];
        doc.design['story_limit'] = 15;
      }),
    // English "wrong" gains "it depends" as a verdict form of its reference side (as in test/run/freshReadings.test.ts).
    correct: (dir) => edit(path.join(dir, 'concept-pairs.yaml'), /(- id: en\.wrong-right\n(?:.*\n)*?\s+reference:\n\s+verdict: wrong\n)/, '$1      verdict_forms: [it depends]\n'),
    readingFolders: ['generate'],
    notice: [/^generate: re-read \d+ stored reading\(s\).*; [1-9]\d* now read differently$/],
    paid: false,
  },
];

describe('on AWS, stored readings follow the design as it stands', () => {
  it.each(corrections)('$label: read again by the next execution, as the local run reads them and as a fresh reading does', async (c) => {
    // prepare: the campaign run locally and through the state machine, on the same (simulated) replies
    const dir = path.join(root, c.label.slice(0, 5).replace(/\W/g, '_'));
    await mkdir(dir, { recursive: true });
    const file = await c.write(dir);
    const first = await runLocally(file);
    const { name } = first;
    await p.upload(file);
    expect((await p.execute({ campaign: name })).result.status).toBe('SUCCEEDED');
    const before = await p.results(name);
    expectSameAsLocal(before, await localResults(first.dataDir, name), name);
    const phases = first.summary.phases.map((s) => s.phase);
    const answeredBefore = await answered(await p.localCopy(name), name, phases);
    const readingsBefore = await Promise.all(c.readingFolders.map((f) => bucketReadings(name, f, phases)));

    // act: the design corrected, run again locally (its re-read) and started again on AWS
    await c.correct(dir);
    const second = await runLocally(file);
    // locally too, the judge items the correction made are asked (a complete campaign's shortcut sees the data files changed)
    expect((second.summary.phases.find((s) => s.phase === 'judge')?.done ?? 0) > 0).toBe(c.paid);
    await p.upload(file);
    const run = await p.execute({ campaign: name });
    expect(run.result.status).toBe('SUCCEEDED');

    // assess: the readings moved, and the tables equal the local run's of the corrected design on the same replies
    const after = await p.results(name);
    const readings = await Promise.all(c.readingFolders.map((f) => bucketReadings(name, f, phases)));
    expect(readings[0]).not.toEqual(readingsBefore[0]);
    if (c.paid) expect(after.get('summary.md')).not.toBe(before.get('summary.md'));
    // the same items answered as locally: the new judge items once each, nothing else asked again
    const answeredAfter = await answered(await p.localCopy(name), name, phases);
    expect(answeredAfter).toEqual(await answered(second.dataDir, name, phases));
    const judgeAsked = (answeredAfter['judge']?.length ?? 0) - (answeredBefore['judge']?.length ?? 0);
    expect(judgeAsked > 0).toBe(c.paid);
    expect(answeredAfter['generate']).toEqual(answeredBefore['generate']);
    const acc = await p.accounting(name, phases);
    for (const phase of phases) expect([...acc.phases[phase]!.okPerItem.values()].every((n) => n === 1), `${phase}: one ok reply per item`).toBe(true);
    expect(acc.budget.spent_usd).toBeCloseTo(acc.storedCostUsd, 12);
    expect(acc.budget.spent_usd).toBeCloseTo(second.summary.spentUsd, 12);
    expect(acc.budget.reserved_usd).toBeCloseTo(0, 12);
    expectSameAsLocal(after, await localResults(second.dataDir, name), name);
    // the notice says what was read again and what was listed again, for `sondage status --aws`
    const notice = await rereadNoticeOf(p.store, name);
    expect(notice?.execution).toBe(run.name);
    for (const line of c.notice) expect(notice?.lines.some((l) => line.test(l)), `notice line ${line}`).toBe(true);
    expect(p.fleet.logs.some((l) => l.includes('"stored readings"'))).toBe(true);

    // a fresh reading of the same replies: every reading dropped, a third execution reads them all, nothing moves
    expect(await dropBucketReadings(name)).toBeGreaterThan(0);
    const fresh = await p.execute({ campaign: name });
    expect(fresh.result.status).toBe('SUCCEEDED');
    expect(await p.results(name)).toEqual(after);
    expect(await Promise.all(c.readingFolders.map((f) => bucketReadings(name, f, phases)))).toEqual(readings);
    expect((await p.accounting(name, phases)).budget.spent_usd).toBeCloseTo(acc.budget.spent_usd, 12);

    // and an execution with nothing edited reads nothing again and says nothing
    const quiet = await p.execute({ campaign: name });
    expect(quiet.result.status).toBe('SUCCEEDED');
    expect((await rereadNoticeOf(p.store, name))?.lines).toEqual([]);
  }, 600_000);
});
