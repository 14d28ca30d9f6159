import { expect } from 'vitest';
import { EmbeddedLedger } from '../../lib/store/index.js';
import { costOf, okCounts, readResult, storedReplies } from './runData.js';

/**
 * What an uninterrupted local run of a campaign left: the run that was killed, aborted, resumed
 * or asked in slices must end with the same.
 */
export interface RunReference<Phase extends string> {
  readonly campaign: string;
  /** The ledger's spend at the end. */
  readonly spent: number;
  /** Per phase (every phase of the campaign), the sorted ids of the items with a successful reply. */
  readonly ok: Readonly<Record<Phase, readonly string[]>>;
  /** The compared results files, name → text. */
  readonly results: Readonly<Record<string, string>>;
}

/** The sorted ids of the items of one phase that have a successful stored reply. */
export async function okItemIds(dataDir: string, campaign: string, phase: string): Promise<string[]> {
  return [...okCounts(await storedReplies(dataDir, campaign, phase)).keys()].sort();
}

/** Reads a finished run's reference from its data folder: `phases` must be all the campaign's phases. */
export async function takeReference<Phase extends string>(
  dataDir: string,
  campaign: string,
  spent: number,
  phases: readonly Phase[],
  results: readonly string[],
): Promise<RunReference<Phase>> {
  const ok = {} as Record<Phase, string[]>;
  for (const phase of phases) ok[phase] = await okItemIds(dataDir, campaign, phase);
  const texts: Record<string, string> = {};
  for (const name of results) texts[name] = await readResult(dataDir, campaign, name);
  return { campaign, spent, ok, results: texts };
}

/**
 * Asserts that the run in `dataDir` ended as the reference: exactly one successful reply per item,
 * the reference's items, nothing pending or reserved in the ledger, spend counted once (the ledger
 * charged what the stored replies cost, as the reference did), and the same results files.
 */
export async function expectSameAsReference<Phase extends string>(dataDir: string, ref: RunReference<Phase>): Promise<void> {
  const { campaign } = ref;
  const ledger = new EmbeddedLedger(dataDir);
  try {
    let stored = 0;
    for (const phase of Object.keys(ref.ok) as Phase[]) {
      const rows = await storedReplies(dataDir, campaign, phase);
      const counts = okCounts(rows);
      expect([...counts].filter(([, n]) => n !== 1), `${phase}: items with more than one successful reply`).toEqual([]);
      expect([...counts.keys()].sort(), `${phase}: items with a successful reply`).toEqual(ref.ok[phase]);
      expect((await ledger.counts(campaign, phase)).pending, `${phase}: items pending`).toBe(0);
      stored += costOf(rows.filter((r) => r.status === 'ok'));
    }
    const budget = await ledger.budget(campaign);
    expect(budget.reserved_usd).toBe(0);
    expect(budget.spent_usd).toBeCloseTo(stored, 10);
    expect(budget.spent_usd).toBeCloseTo(ref.spent, 10);
  } finally {
    await ledger.close();
  }
  for (const [name, text] of Object.entries(ref.results)) expect(await readResult(dataDir, campaign, name), name).toBe(text);
}
