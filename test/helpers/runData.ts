import { existsSync, readdirSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { EmbeddedLedger, layout, readParquet, tableGlob } from '../../lib/store/index.js';
import type { BudgetState, ItemCounts } from '../../lib/store/types.js';

/** The columns of a stored reply that the run tests look at. */
export interface StoredReply {
  readonly item_id: string;
  readonly model: string;
  readonly language: string;
  readonly attempt: number;
  readonly status: 'ok' | 'error';
  readonly cost_usd: number;
  readonly error_class: string | null;
}

/** Every reply row stored in the Parquet parts of one phase (all models and languages). */
export function storedReplies(dataDir: string, campaign: string, phase: string): Promise<StoredReply[]> {
  return readParquet<StoredReply>(
    tableGlob(dataDir, campaign, phase, 'replies'),
    'SELECT item_id, model, language, attempt, status, cost_usd, error_class FROM parts ORDER BY item_id, attempt',
  );
}

/** Successful replies per item id. */
export function okCounts(rows: readonly StoredReply[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) if (r.status === 'ok') out.set(r.item_id, (out.get(r.item_id) ?? 0) + 1);
  return out;
}

/** Asserts that each of `items` items has exactly one successful reply among `rows` (none lost, none paid twice); returns the counts. */
export function expectOneOkEach(rows: readonly StoredReply[], items: number): Map<string, number> {
  const ok = okCounts(rows);
  expect(ok.size).toBe(items);
  expect([...ok.values()].every((c) => c === 1)).toBe(true);
  return ok;
}

/** Sum of `cost_usd` over the rows. */
export function costOf(rows: readonly StoredReply[]): number {
  return rows.reduce((s, r) => s + r.cost_usd, 0);
}

export interface LedgerSnapshot {
  readonly budget: BudgetState;
  readonly generate: ItemCounts;
  readonly judge: ItemCounts;
}

/** The ledger's budget and item counts, read through a connection of its own. */
export async function ledgerSnapshot(dataDir: string, campaign: string): Promise<LedgerSnapshot> {
  const ledger = new EmbeddedLedger(dataDir);
  try {
    return {
      budget: await ledger.budget(campaign),
      generate: await ledger.counts(campaign, 'generate'),
      judge: await ledger.counts(campaign, 'judge'),
    };
  } finally {
    await ledger.close();
  }
}

/** Every results file of a campaign, by name, as text (what a local run wrote, to compare with AWS's). */
export async function readResults(dataDir: string, campaign: string): Promise<Map<string, string>> {
  const folder = path.join(dataDir, layout.campaignPrefix(campaign), 'results');
  const out = new Map<string, string>();
  for (const name of await readdir(folder)) out.set(name, await readFile(path.join(folder, name), 'utf8'));
  return out;
}

/** A results file (`story_scores.csv`, …) of a campaign as text. */
export function readResult(dataDir: string, campaign: string, name: string): Promise<string> {
  return readFile(path.join(dataDir, layout.resultsKey(campaign, name)), 'utf8');
}

/** Paths of the files under `dir` (recursively) whose name passes `keep`; [] when `dir` is absent. */
export async function filesUnder(dir: string, keep: (name: string) => boolean = () => true): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return entries
    .filter((e) => e.isFile() && keep(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** The journal folder of one partition, as runCampaign lays it out. */
export function journalDir(dataDir: string, campaign: string, phase: string, model: string, language: string): string {
  return path.join(dataDir, 'campaigns', campaign, phase, '_journal', `model=${model}`, `language=${language}`);
}

/** Every file under a folder, relative path → size in bytes; empty when the folder does not exist. */
export function fileSizes(folder: string): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else out[path.relative(folder, full)] = statSync(full).size;
    }
  };
  walk(folder);
  return out;
}
