/**
 * Replies the ledger counts as done must be stored. A replies part removed or emptied by hand
 * leaves items that the ledger counts as done — a run never asks them again — and tables that lack
 * them with exit 0: a quietly wrong result. Checked before an analysis reads a campaign here.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parquetSource } from '../query/sql.js';
import type { DuckDb } from '../store/DuckDb.js';
import { EmbeddedLedger } from '../store/EmbeddedLedger.js';
import { StorageError } from '../store/storageErrors.js';

/**
 * Throws a StorageError naming the first phase whose stored replies hold fewer items than the
 * ledger counts as done there (every item done has at least one stored reply row: a part is written
 * before the ledger commits it, lib/run/Journal.ts). No ledger in `dataDir`: nothing to compare.
 * @example await checkRepliesCoverLedger(db, dataDir, 'demo', ['generate', 'judge'], (p) => tableGlob(dataDir, 'demo', p, 'replies'));
 */
export async function checkRepliesCoverLedger(
  db: DuckDb,
  dataDir: string,
  campaign: string,
  phases: readonly string[],
  repliesGlob: (phase: string) => string,
): Promise<void> {
  if (!existsSync(path.join(path.resolve(dataDir), 'ledger.sqlite'))) return;
  const ledger = new EmbeddedLedger(dataDir);
  try {
    for (const phase of phases) {
      const { done } = await ledger.counts(campaign, phase);
      if (done === 0) continue;
      const glob = repliesGlob(phase);
      const stored = (await db.hasFiles(glob))
        ? Number((await db.all<{ n: number }>(`SELECT count(DISTINCT item_id) AS n FROM ${parquetSource(glob)} r`))[0]?.n ?? 0)
        : 0;
      if (stored >= done) continue;
      const folder = path.dirname(glob.replace(/\*\*?.*$/, 'x'));
      throw new StorageError(
        `${folder}: the ledger counts ${done} ${phase} items as answered, and the stored replies hold ${stored}: ` +
          `a replies part there was removed or emptied; nothing was computed. Restore it from a copy, then run the same command again ` +
          '(a run does not ask again what the ledger counts as done, so without the part its replies are missing from the tables)',
        folder,
      );
    }
  } finally {
    await ledger.close();
  }
}
