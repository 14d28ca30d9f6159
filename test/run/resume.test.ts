import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournal } from '../../lib/run/Journal.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { EmbeddedLedger } from '../../lib/store/index.js';
import type { ReplyRow } from '../../lib/store/types.js';
import { loadContext, simulateOnModels, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { exited, spawnCli } from '../helpers/cli.js';
import { filesUnder, journalDir, ledgerSnapshot, okCounts, storedReplies } from '../helpers/runData.js';
import { expectSameAsReference, takeReference, type RunReference } from '../helpers/runReference.js';

// "What must hold": a run killed mid-way and started again ends with exactly one successful reply
// per item, the same results as an uninterrupted run, and every reply's cost counted once.

const CAMPAIGN = 'run-small';
const COMPARED_RESULTS = ['story_scores.csv', 'readout_comparisons.csv'];

interface Reference extends RunReference<'generate' | 'judge'> {
  /** Successful alpha/en replies as the run journaled them, for the hand-written journal. */
  readonly alphaEn: ReplyRow[];
  readonly generateItems: number;
}

let root: string;
let cleanup: () => Promise<void>;
let campaignFile: string;
let ref: Reference;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('resume'));
  campaignFile = await writeCampaign(root, 'small.yaml');
  const dataDir = path.join(root, 'reference');
  const alphaEn: ReplyRow[] = [];
  const summary = await runCampaign(await loadContext(campaignFile), {
    dataDir,
    onReply: (row) => {
      if (row.phase === 'generate' && row.model === 'alpha' && row.language === 'en' && row.status === 'ok') alphaEn.push(row);
    },
  });
  expect(summary.stopped).toBeUndefined();
  ref = {
    ...(await takeReference(dataDir, CAMPAIGN, summary.spentUsd, ['generate', 'judge'], COMPARED_RESULTS)),
    alphaEn,
    generateItems: summary.phases[0]!.items,
  };
  // The comparison means something only if the reference asked and judged everything.
  expect(ref.ok.generate.length).toBe(ref.generateItems);
  expect(ref.ok.judge.length).toBeGreaterThan(0);
  expect(alphaEn.length).toBeGreaterThan(40);
});

afterAll(() => cleanup?.());

async function journalLines(dataDir: string): Promise<number> {
  let n = 0;
  for (const file of await filesUnder(path.join(dataDir, 'campaigns', CAMPAIGN, 'generate', '_journal'), (f) => f.endsWith('.ndjson'))) {
    n += (await readFile(file, 'utf8').catch(() => '')).split('\n').length - 1;
  }
  return n;
}

describe('a run killed mid-way and started again', () => {
  it('SIGKILLed `sondage run`: the next run adopts its journals and ends as an uninterrupted run', async () => {
    // Simulated latency keeps the generate phase busy for a few seconds, so the kill lands in it.
    const slowDir = path.join(root, 'slow');
    await mkdir(slowDir);
    const slowFile = await writeCampaign(slowDir, 'small.yaml', (doc) => {
      doc.concurrency = 4;
      simulateOnModels(doc, { latency_ms: 12 });
    });
    const dataDir = path.join(root, 'killed');
    const child = spawnCli(['run', slowFile, '--data-dir', dataDir, '--quiet']);
    const exit = exited(child);

    // Kill once one partition's part is committed and others have replies only in their journals.
    const replies = path.join(dataDir, 'campaigns', CAMPAIGN, 'generate', 'replies');
    let killed = false;
    while (child.exitCode === null) {
      const parts = await filesUnder(replies, (f) => f.endsWith('.parquet'));
      if (parts.length >= 1 && (await journalLines(dataDir)) >= 20) {
        killed = child.kill('SIGKILL');
        break;
      }
      await sleep(20);
    }
    expect(killed, `the run ended before it could be killed:\n${child.output().stderr}`).toBe(true);
    expect(await exit).toBe('SIGKILL');

    const before = await ledgerSnapshot(dataDir, CAMPAIGN);
    // Killed in the generate phase (perhaps in the middle of a part's commit), with replies in journals.
    expect(before.generate.done).toBeLessThan(ref.generateItems);
    // What the next run must adopt: successful replies in the journals whose items are not done
    // (a journal whose part was committed just before the kill holds none of those).
    const journaled = new Map<string, { model: string; language: string; ids: Set<string> }>();
    for (const f of await filesUnder(path.join(dataDir, 'campaigns', CAMPAIGN, 'generate', '_journal'), (n) => n.endsWith('.ndjson'))) {
      for (const r of await readJournal<ReplyRow>(f)) {
        if (r.status !== 'ok') continue;
        const key = `${r.model}/${r.language}`;
        const entry = journaled.get(key) ?? { model: r.model, language: r.language, ids: new Set<string>() };
        entry.ids.add(r.item_id);
        journaled.set(key, entry);
      }
    }
    const ledger = new EmbeddedLedger(dataDir);
    let toAdopt = 0;
    for (const { model, language, ids } of journaled.values()) toAdopt += (await ledger.pendingAmong(CAMPAIGN, { phase: 'generate', model, language }, [...ids])).size;
    await ledger.close();

    const summary = await runCampaign(await loadContext(slowFile), { dataDir });
    expect(summary.stopped).toBeUndefined();
    expect(summary.phases[0]!.adopted).toBe(toAdopt);
    expect(summary.phases[0]!.pending).toBe(0);
    expect(await journalLines(dataDir)).toBe(0);
    await expectSameAsReference(dataDir, ref);
    // The dead run's reservations were never simply handed back: the calls its journals show came
    // back are counted at their cost, the ones that left no reply (in flight at the kill, maybe
    // billed) as possibly billed, against the cap, never more than what the dead run held.
    const after = await ledgerSnapshot(dataDir, CAMPAIGN);
    expect(after.budget.orphaned_usd).toBe(0);
    expect(after.budget.possibly_billed_usd).toBeGreaterThanOrEqual(0);
    expect(after.budget.possibly_billed_usd).toBeLessThanOrEqual(before.budget.reserved_usd + 1e-12);
    expect(after.budget.spent_usd + after.budget.possibly_billed_usd).toBeLessThanOrEqual(after.budget.cap_usd);
  });

  it('aborted through its AbortSignal: stops cleanly, and the next run asks only the rest', async () => {
    const dataDir = path.join(root, 'aborted');
    const controller = new AbortController();
    const firstAsked = new Set<string>();
    let ok = 0;
    const first = await runCampaign(await loadContext(campaignFile), {
      dataDir,
      signal: controller.signal,
      chunkSize: 8,
      onReply: (row) => {
        firstAsked.add(row.item_id);
        if (row.status === 'ok' && ++ok === Math.floor(ref.generateItems * 0.4)) controller.abort();
      },
    });
    expect(first.stopped).toBe('aborted');
    expect(first.analysis).toBeUndefined();
    const mid = await ledgerSnapshot(dataDir, CAMPAIGN);
    expect(mid.generate.done).toBeGreaterThanOrEqual(Math.floor(ref.generateItems * 0.4));
    expect(mid.generate.done).toBeLessThan(ref.generateItems);
    // What the aborted run paid for is committed: no journal left, nothing still reserved.
    expect(await journalLines(dataDir)).toBe(0);
    expect(mid.budget.reserved_usd).toBe(0);
    const doneAfterFirst = okCounts(await storedReplies(dataDir, CAMPAIGN, 'generate'));

    const secondAsked: string[] = [];
    const second = await runCampaign(await loadContext(campaignFile), {
      dataDir,
      onReply: (row) => {
        if (row.phase === 'generate') secondAsked.push(row.item_id);
      },
    });
    expect(second.stopped).toBeUndefined();
    expect(secondAsked.filter((id) => doneAfterFirst.has(id))).toEqual([]);
    expect(secondAsked.length).toBe(ref.generateItems - doneAfterFirst.size);
    await expectSameAsReference(dataDir, ref);
  });

  it("adopts a killed run's journal with a torn last line: its replies are not asked again and cost once", async () => {
    const dataDir = path.join(root, 'journal');
    const kept = ref.alphaEn.slice(0, 30);
    const torn = ref.alphaEn[30]!;
    const dir = journalDir(dataDir, CAMPAIGN, 'generate', 'alpha', 'en');
    await mkdir(dir, { recursive: true });
    const tornLine = JSON.stringify(torn);
    await writeFile(
      path.join(dir, '20200101T000000-dead00-generate-00000.ndjson'),
      `${kept.map((r) => JSON.stringify(r)).join('\n')}\n${tornLine.slice(0, Math.floor(tornLine.length / 2))}`,
    );

    const asked = new Set<string>();
    const summary = await runCampaign(await loadContext(campaignFile), {
      dataDir,
      onReply: (row) => {
        if (row.phase === 'generate') asked.add(row.item_id);
      },
    });
    expect(summary.stopped).toBeUndefined();
    expect(summary.phases[0]!.adopted).toBe(kept.length);
    expect(kept.filter((r) => asked.has(r.item_id))).toEqual([]);
    // The torn reply never made it to disk whole: its item is asked again.
    expect(asked.has(torn.item_id)).toBe(true);
    expect(asked.size).toBe(ref.generateItems - kept.length);
    expect(await journalLines(dataDir)).toBe(0);
    await expectSameAsReference(dataDir, ref);
  });
});
