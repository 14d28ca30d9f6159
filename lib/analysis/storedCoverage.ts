/**
 * Replies the ledger counts as done must be stored. A replies part removed or emptied by hand
 * leaves items that the ledger counts as done — a run never asks them again — and tables that lack
 * them with exit 0: a quietly wrong result. Checked before an analysis reads a campaign here.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parquetSource } from '../query/sql.js';
import { sqlString } from '../store/DuckDb.js';
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
      const culprit = await missingOrEmptyPart(db, dataDir, glob, await ledger.committedParts(campaign, phase));
      const where = culprit ?? path.dirname(glob.replace(/\*\*?.*$/, 'x'));
      throw new StorageError(
        `${where}: the ledger counts ${done} ${phase} items as answered, and the stored replies hold ${stored}: ` +
          `${culprit === undefined ? 'a replies part there was removed or emptied' : existsSync(culprit) ? 'this replies part holds no rows' : 'this replies part the ledger committed is gone'}; ` +
          'nothing was computed. Restore it from a copy, then run the same command again ' +
          '(a run does not ask again what the ledger counts as done, so without the part its replies are missing from the tables)',
        where,
      );
    }
  } finally {
    await ledger.close();
  }
}

/** The first replies part the ledger committed that is gone, else the first stored one with no rows (part keys are relative to the data folder). */
async function missingOrEmptyPart(db: DuckDb, dataDir: string, glob: string, committed: ReadonlySet<string>): Promise<string | undefined> {
  const root = path.resolve(dataDir);
  const gone = [...committed].map((key) => path.join(root, ...key.split('/'))).filter((file) => !existsSync(file));
  if (gone.length > 0) return gone.sort()[0];
  if (!(await db.hasFiles(glob))) return undefined;
  const [empty] = await db.all<{ file: string }>(`SELECT file_name AS file FROM parquet_file_metadata(${sqlString(glob)}) WHERE num_rows = 0 ORDER BY file_name LIMIT 1`);
  return empty?.file;
}
