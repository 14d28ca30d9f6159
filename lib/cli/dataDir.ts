/**
 * The data folder as the commands check it before they touch it: writable before `run` and
 * `analyze` write (lib/store/dataDir.ts), and holding the campaign before `analyze` and `status`
 * read it — a `--data-dir` that points at another campaign's data is named as such, not analysed
 * as an empty campaign (nor given an empty results folder inside the other campaign's data).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { campaignsIn, prepareDataDir } from '../store/dataDir.js';
import { SondageError } from '../errors.js';
import { shownPath } from './shownPath.js';

/** How the data folder was given, for messages: the flag, or the campaign file's field. */
export function dataDirLabel(flag: string | undefined, campaignFile: string | undefined): string {
  if (flag !== undefined) return '--data-dir';
  return campaignFile === undefined ? 'the data folder' : `${campaignFile}: data_dir`;
}

/** prepareDataDir for a command about to write the campaign's data or results (`ledger`: false for the analysis, which needs none). */
export async function writableDataDir(dataDir: string, flag: string | undefined, campaign: { readonly file: string; readonly name: string }, ledger = true): Promise<string> {
  assertNotInsideDataDir(dataDir, dataDirLabel(flag, campaign.file));
  return prepareDataDir(dataDir, { label: dataDirLabel(flag, campaign.file), campaign: campaign.name, ledger });
}

/**
 * Refuses a folder inside another data folder's `campaigns/` (a campaign's own folder, its
 * `results/`): a run there would start the whole campaign again, nested, under a fresh budget.
 * @throws SondageError naming the folder and the data folder it belongs to
 */
export function assertNotInsideDataDir(dataDir: string, label: string): void {
  let dir = path.resolve(dataDir);
  for (;;) {
    const parent = path.dirname(dir);
    if (parent === dir) return;
    if (path.basename(parent) === 'campaigns' && existsSync(path.join(path.dirname(parent), 'ledger.sqlite'))) {
      const root = path.dirname(parent);
      throw new SondageError(
        `${label} ${path.resolve(dataDir)} is inside the data folder ${root} (campaign ${path.basename(dir)}'s own folder): ` +
          `give the data folder itself, --data-dir ${root}, or a folder of its own`,
      );
    }
    dir = parent;
  }
}

/**
 * Throws unless the data folder holds the campaign (`campaigns/<name>/`), naming the campaigns it
 * holds instead, so that a wrong `--data-dir` reads as one.
 * @throws SondageError `sondage analyze: demo has not run in data (it holds run-small); …` (the folder relative to the working directory)
 */
export async function assertCampaignIn(command: string, dataDir: string, name: string, file?: string): Promise<void> {
  const held = await campaignsIn(dataDir);
  if (held.includes(name)) return;
  const holds = held.length > 0 ? `it holds ${held.join(', ')}` : 'it holds no campaign';
  const run = file === undefined ? '`sondage run <campaign.yaml>`' : `\`sondage run ${file}\``;
  throw new SondageError(
    `sondage ${command}: ${name} has not run in ${shownPath(dataDir)} (${holds}); run it first with ${run}, or give the --data-dir it ran with`,
  );
}
