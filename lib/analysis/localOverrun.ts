/**
 * The overrun a local ledger recorded — a provider that reported more usage than its calls
 * reserved — for the spend line of a local analysis's report.html and summary.md, as `sondage
 * status` shows it (docs/budget.md, "A provider that reports more than was reserved").
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { EmbeddedLedger } from '../store/EmbeddedLedger.js';

/**
 * The model and excess the ledger in `dataDir` recorded for `campaign`; undefined where it recorded
 * none, or where `dataDir` has no ledger (replies brought from elsewhere).
 * @example await localOverrun('./data', 'demo') // { model: 'gpt', excessUsd: 0.31 }
 */
export async function localOverrun(dataDir: string, campaign: string): Promise<{ readonly model: string; readonly excessUsd: number } | undefined> {
  if (!existsSync(path.join(path.resolve(dataDir), 'ledger.sqlite'))) return undefined;
  const ledger = new EmbeddedLedger(dataDir);
  try {
    const overrun = await ledger.overrunOf(campaign);
    return overrun ? { model: overrun.model, excessUsd: overrun.excessUsd } : undefined;
  } finally {
    await ledger.close();
  }
}
