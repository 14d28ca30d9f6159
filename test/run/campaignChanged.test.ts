/**
 * A campaign that changed between runs, and a ledger that was lost. Editing the file (a language dropped, more repeats, another seed) and
 * running again re-plans cleanly: the run says what changed, asks only the new items, keeps every
 * collected reply, and analyses exactly the design the file has now — the same results as a fresh
 * run of the edited file. A deleted ledger is rebuilt from the stored replies: nothing asked again,
 * the spend still counted.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerStatus } from '../../lib/cli/commands/status.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { EmbeddedLedger, readParquet, tableGlob } from '../../lib/store/index.js';
import type { CampaignDoc } from '../helpers/campaigns.js';
import { loadContext, useTempDir, writeCampaign } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';
import { costOf, okCounts, readResult, storedReplies } from '../helpers/runData.js';

const CAMPAIGN = 'run-small';
const RESULTS = ['story_scores.csv', 'cell_summary.csv', 'identity_counts.csv', 'readout_comparisons.csv'];

const tmp = useTempDir('changed', 'all');

async function results(dataDir: string): Promise<Record<string, string>> {
  return Object.fromEntries(await Promise.all(RESULTS.map(async (n) => [n, await readResult(dataDir, CAMPAIGN, n)] as const)));
}

/** The generate prompts of the given languages (the partitions of a dropped language stay stored, unread). */
async function promptIds(dataDir: string, languages: readonly string[]): Promise<string[]> {
  const rows = await readParquet<{ item_id: string }>(
    tableGlob(dataDir, CAMPAIGN, 'generate', 'prompts'),
    `SELECT item_id FROM parts WHERE language IN (${languages.map((l) => `'${l}'`).join(', ')}) ORDER BY item_id`,
  );
  return rows.map((r) => r.item_id);
}

describe('a campaign edited between runs', () => {
  it.each([
    [
      'a language dropped and more repeats',
      (doc: CampaignDoc): void => {
        doc.design['languages'] = ['en'];
        doc.design['repeats'] = { count: 3, fraction: 0.5 };
      },
      [/model × language partitions no longer in the campaign: alpha\/de, beta\/de/, /generate: \d+ → \d+ items/],
    ],
    ['another seed', (doc: CampaignDoc): void => void (doc['seed'] = 99), [/generate: \d+ → \d+ items|^$/]],
  ] as const)('%s: says what changed, asks only the new items, analyses the file as it is now', async (name, edit, said) => {
    const dir = path.join(tmp.dir, name.replace(/\W+/g, '-'));
    const dataDir = path.join(dir, 'data');
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => void (doc['data_dir'] = dataDir), `${name.replace(/\W+/g, '-')}.yaml`);
    await runCampaign(await loadContext(file), { dataDir });
    const before = await storedReplies(dataDir, CAMPAIGN, 'generate');

    // Edit the file and run again.
    const edited = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc['data_dir'] = dataDir;
      edit(doc);
    }, `${name.replace(/\W+/g, '-')}.yaml`);
    const log: string[] = [];
    const asked: string[] = [];
    const again = await runCampaign(await loadContext(edited), { dataDir, log: (l) => log.push(l), onReply: (r) => asked.push(r.item_id) });
    expect(again.stopped).toBeUndefined();
    for (const pattern of said) expect(log.join('\n')).toMatch(pattern);
    // Every reply collected before is still stored; no item answered before was asked again.
    const after = await storedReplies(dataDir, CAMPAIGN, 'generate');
    const keptIds = new Set(after.map((r) => r.item_id));
    for (const r of before) expect(keptIds.has(r.item_id)).toBe(true);
    const answeredBefore = new Set(before.filter((r) => r.status === 'ok').map((r) => r.item_id));
    expect(asked.filter((id) => answeredBefore.has(id))).toEqual([]);

    // The analysis reads the edited file's design only: its prompts are a fresh run's, and with the
    // same seed (the simulated replies are a function of seed, model and item) so are its results.
    const freshDir = path.join(dir, 'fresh');
    await runCampaign(await loadContext(edited), { dataDir: freshDir });
    const languages = (await loadContext(edited)).design.languages;
    expect(await promptIds(dataDir, languages)).toEqual(await promptIds(freshDir, languages));
    if (name !== 'another seed') expect(await results(dataDir)).toEqual(await results(freshDir));

    // Status counts the design as it is now: done never passes planned.
    const ledger = new EmbeddedLedger(dataDir);
    try {
      const status = await ledgerStatus(ledger, CAMPAIGN, again.plan);
      for (const p of status.phases) expect(p.done + p.failed + p.inFlight + p.pending, p.phase).toBe(p.planned);
      expect(status.phases.find((p) => p.phase === 'generate')).toMatchObject({ pending: 0, inFlight: 0 });
    } finally {
      await ledger.close();
    }
  }, 120_000);

  it('`sondage analyze` names the stored partitions it leaves out', async () => {
    const dataDir = path.join(tmp.dir, 'analyze', 'data');
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => void (doc['data_dir'] = dataDir), 'analyze.yaml');
    await runCampaign(await loadContext(file), { dataDir, skipAnalysis: true });
    await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc['data_dir'] = dataDir;
      doc.design['languages'] = ['de'];
    }, 'analyze.yaml');
    const { code, stderr } = await runMain(['analyze', file]);
    expect(code).toBe(0);
    expect(stderr).toContain('not analysed: alpha/en, beta/en (stored, but no longer in the campaign file)');
    expect(await readResult(dataDir, CAMPAIGN, 'story_scores.csv')).not.toMatch(/,en,/);
  }, 60_000);
});

describe('a ledger lost while replies remain', () => {
  it('is rebuilt from the stored replies before any call: nothing asked again, the spend still counted', async () => {
    const dataDir = path.join(tmp.dir, 'lost', 'data');
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => void (doc['data_dir'] = dataDir), 'lost.yaml');
    const first = await runCampaign(await loadContext(file), { dataDir });
    const scores = await readResult(dataDir, CAMPAIGN, 'story_scores.csv');
    for (const f of ['ledger.sqlite', 'ledger.sqlite-wal', 'ledger.sqlite-shm']) await rm(path.join(dataDir, f), { force: true });

    const log: string[] = [];
    let asked = 0;
    const again = await runCampaign(await loadContext(file), { dataDir, log: (l) => log.push(l), onReply: () => asked++ });
    expect(asked).toBe(0);
    expect(log.join('\n')).toMatch(/the ledger had no record of run-small while \d+ reply part\(s\) are stored: rebuilt/);
    expect(again.spentUsd).toBeCloseTo(first.spentUsd, 10);
    const all = [...(await storedReplies(dataDir, CAMPAIGN, 'generate')), ...(await storedReplies(dataDir, CAMPAIGN, 'judge'))];
    expect([...okCounts(all).values()].every((n) => n === 1)).toBe(true);
    expect(again.spentUsd).toBeCloseTo(costOf(all), 10);
    expect(await readFile(path.join(dataDir, 'campaigns', CAMPAIGN, 'results', 'story_scores.csv'), 'utf8')).toBe(scores);
  }, 60_000);
});
