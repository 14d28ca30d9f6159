/**
 * Replies the ledger counts as done must be stored. A replies part removed or emptied by hand
 * leaves items that the ledger counts as done — a run never asks them again — and tables that lack
 * them with exit 0: a quietly wrong result. Checked before an analysis reads a campaign here.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { DuckDb, sqlString, tableGlob } from '../store/DuckDb.js';
import { EmbeddedLedger } from '../store/EmbeddedLedger.js';
import { tableColumns } from '../store/schemas.js';
import { StorageError } from '../store/storageErrors.js';
import { checkStoredParts } from '../store/storedParts.js';

/**
 * Throws a StorageError naming the first replies part the ledger committed that is gone, or else the
 * first stored replies part with no rows: the ledger counts their items as answered, and a run would
 * not ask them again. Both are found without reading a row (the files, the parts' footers); a part
 * with only some of its rows deleted is not seen (counting the stored items against the ledger's
 * took ~1.5 s at a million replies). No ledger in `dataDir`: nothing to compare.
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
      const culprit = await missingOrEmptyPart(db, dataDir, repliesGlob(phase), await ledger.committedParts(campaign, phase));
      if (culprit === undefined) continue;
      throw new StorageError(
        `${culprit}: this ${phase} replies part, whose items the ledger counts as answered, ${existsSync(culprit) ? 'holds no rows' : 'is gone'}; ` +
          'nothing was computed. Restore it from a copy, then run the same command again ' +
          '(a run does not ask again what the ledger counts as done, so without the part its replies are missing from the tables)',
        culprit,
      );
    }
  } finally {
    await ledger.close();
  }
}

/**
 * The same check on the campaign's phases in `dataDir`, with a DuckDB of its own: for a run that
 * finds nothing to ask, so that it does not call a campaign complete whose replies are missing.
 */
export async function checkCampaignRepliesCoverLedger(dataDir: string, campaign: string, phases: readonly string[]): Promise<void> {
  const db = await DuckDb.open();
  const glob = (phase: string): string => tableGlob(dataDir, campaign, phase, 'replies');
  try {
    // A part that is no whole Parquet file is named as the analysis names it, before its footer is read.
    for (const phase of phases) if (await db.hasFiles(glob(phase))) await checkStoredParts(db, glob(phase), 'replies', tableColumns('replies'));
    await checkRepliesCoverLedger(db, dataDir, campaign, phases, glob);
  } finally {
    db.close();
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
