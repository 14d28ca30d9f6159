import Database from 'better-sqlite3';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { itemMaxCost } from '../../lib/run/planCampaign.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, tempDir, writeCampaign, type CampaignDoc, rootItems } from '../helpers/campaigns.js';
import { costOf, ledgerSnapshot, okCounts, readResult, storedReplies } from '../helpers/runData.js';

// "What must hold": with many concurrent workers, spending never passes the cap — not in the
// ledger, not in what was stored, not at any moment of the run — and a run after raising the cap
// collects the rest without asking anything twice.

const CAMPAIGN = 'run-small';
const CAP = 0.06;
/** Rounding slack of the ledger's cap check (EmbeddedLedger CAP_TOLERANCE_USD). */
const SLACK = 1e-12;

const manyWorkers = (doc: CampaignDoc) => {
  doc.concurrency = 64;
};

let root: string;
let cleanup: () => Promise<void>;
let reference: { spent: number; scores: string; generateItems: number; maxCallReservation: number };

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('budget'));
  const file = await writeCampaign(root, 'small.yaml', manyWorkers, 'reference.yaml');
  const dataDir = path.join(root, 'reference');
  const ctx = await loadContext(file);
  const summary = await runCampaign(ctx, { dataDir });
  expect(summary.stopped).toBeUndefined();
  let maxCallReservation = 0;
  for (const model of ctx.campaign.models) {
    for (const language of ctx.design.languages) {
      for (const item of rootItems(ctx, model, language)) maxCallReservation = Math.max(maxCallReservation, itemMaxCost(item, model.price));
    }
  }
  reference = {
    spent: summary.spentUsd,
    scores: await readResult(dataDir, CAMPAIGN, 'story_scores.csv'),
    generateItems: summary.phases[0]!.items,
    maxCallReservation,
  };
  expect(maxCallReservation).toBeLessThan(CAP / 10);
  // The cap must stop the run well inside the generate phase.
  expect(summary.phases[0]!.costUsd).toBeGreaterThan(2 * CAP);
});

afterAll(() => cleanup?.());

describe('the budget cap under 64 concurrent workers', () => {
  it('is never passed; a run after raising the cap completes without asking done items again', async () => {
    const file = await writeCampaign(root, 'small.yaml', (doc) => {
      manyWorkers(doc);
      doc.budget_usd = CAP;
    });
    const dataDir = path.join(root, 'capped');

    // The ledger as another process would see it, read after every reply of the run.
    let db: Database.Database | undefined;
    const samples: { spent: number; committed: number }[] = [];
    const sample = () => {
      db ??= new Database(path.join(dataDir, 'ledger.sqlite'), { readonly: true });
      const row = db.prepare('SELECT spent_usd, reserved_usd FROM campaigns WHERE campaign = ?').get(CAMPAIGN) as
        | { spent_usd: number; reserved_usd: number }
        | undefined;
      if (row) samples.push({ spent: row.spent_usd, committed: row.spent_usd + row.reserved_usd });
    };
    const first = await runCampaign(await loadContext(file), { dataDir, allowPartial: true, chunkSize: 2, onReply: sample });
    db?.close();

    expect(first.stopped).toBe('budget');
    expect(first.capUsd).toBe(CAP);
    expect(samples.length).toBeGreaterThan(50);
    expect(Math.max(...samples.map((s) => s.committed))).toBeLessThanOrEqual(CAP + SLACK);
    const afterFirst = await ledgerSnapshot(dataDir, CAMPAIGN);
    expect(afterFirst.budget.reserved_usd).toBe(0);
    expect(afterFirst.budget.spent_usd).toBeLessThanOrEqual(CAP + SLACK);
    // It stopped at the cap: what is left would not cover the reservation of one more call.
    expect(afterFirst.budget.spent_usd).toBeGreaterThan(CAP - reference.maxCallReservation);
    expect(afterFirst.generate.done).toBeLessThan(reference.generateItems);
    // Every item of the design is registered, the partitions the cap stopped in the middle of too: what it left is pending.
    expect(afterFirst.generate.pending + afterFirst.generate.done + afterFirst.generate.failed).toBe(reference.generateItems);
    expect(afterFirst.judge.done).toBe(0);

    const stored = await storedReplies(dataDir, CAMPAIGN, 'generate');
    expect(costOf(stored)).toBeLessThanOrEqual(CAP + SLACK);
    expect(costOf(stored)).toBeCloseTo(afterFirst.budget.spent_usd, 12);
    const doneFirst = okCounts(stored);
    expect([...doneFirst.values()].every((n) => n === 1)).toBe(true);
    expect(doneFirst.size).toBe(afterFirst.generate.done);

    // Raise the cap in the campaign file and run again.
    const doc = parse(await readFile(file, 'utf8')) as CampaignDoc;
    doc.budget_usd = 5;
    await writeFile(file, stringify(doc));
    const askedAgain: string[] = [];
    const second = await runCampaign(await loadContext(file), {
      dataDir,
      chunkSize: 2,
      onReply: (row) => {
        if (row.phase === 'generate') askedAgain.push(row.item_id);
      },
    });

    expect(second.stopped).toBeUndefined();
    expect(askedAgain.filter((id) => doneFirst.has(id))).toEqual([]);
    expect(new Set(askedAgain).size).toBe(reference.generateItems - doneFirst.size);
    const end = await ledgerSnapshot(dataDir, CAMPAIGN);
    expect(end.budget.cap_usd).toBe(5);
    expect(end.generate).toEqual({ pending: 0, done: reference.generateItems, failed: 0 });
    expect(end.judge.pending).toBe(0);
    const all = [...(await storedReplies(dataDir, CAMPAIGN, 'generate')), ...(await storedReplies(dataDir, CAMPAIGN, 'judge'))];
    expect([...okCounts(all).values()].every((n) => n === 1)).toBe(true);
    expect(end.budget.spent_usd).toBeCloseTo(costOf(all), 10);
    expect(end.budget.spent_usd).toBeCloseTo(reference.spent, 10);
    expect(await readResult(dataDir, CAMPAIGN, 'story_scores.csv')).toBe(reference.scores);
  });
});
