import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { SondageError } from '../errors.js';
import { campaignPrefix, runLockKey } from './layout.js';
import type { PurgeCount, PurgeSource, PurgeSurvey } from './purge.js';

/** Names in the campaign folder that belong to the run lock: runLockGuard holds and removes them. */
function lockNames(campaign: string): Set<string> {
  const lock = path.posix.basename(runLockKey(campaign));
  return new Set([lock, `${lock}.takeover`]);
}

/** Files and bytes under a folder, symbolic links counted as files and not followed. */
async function tally(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const sub = await tally(full);
      files += sub.files;
      bytes += sub.bytes;
    } else {
      files += 1;
      bytes += (await lstat(full)).size;
    }
  }
  return { files, bytes };
}

/** The top-level entries of the campaign folder a purge deletes, by name. */
type LocalPlan = readonly string[];

/**
 * A campaign's folder on disk, `<dataDir>/campaigns/<campaign>/` (the layout of lib/store/layout.ts:
 * phases with their prompts, replies, readings and journals, `input/`, `results/`, `plan.json`…),
 * as a PurgeSource: counted by top-level entry, deleted entry by entry except the run lock, which
 * runLockGuard holds during the purge and removes with the folder after it.
 *
 * @example const files = new LocalCampaignFiles('./data'); const survey = await files.survey('demo');
 */
export class LocalCampaignFiles implements PurgeSource<LocalPlan> {
  readonly dataDir: string;

  constructor(dataDir: string) {
    this.dataDir = path.resolve(dataDir);
  }

  /** `<dataDir>/campaigns/<campaign>` */
  folder(campaign: string): string {
    return path.join(this.dataDir, ...campaignPrefix(campaign).split('/').filter(Boolean));
  }

  async survey(campaign: string): Promise<PurgeSurvey<LocalPlan>> {
    const folder = this.folder(campaign);
    const where = `${folder}${path.sep}`;
    const info = await lstat(folder).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw new SondageError(`cannot read ${folder}: ${err.code ?? err.message}`, { cause: err });
    });
    if (info === undefined) return { where, counts: [], plan: [] };
    if (!info.isDirectory()) throw new SondageError(`${folder} is not a folder; sondage keeps a campaign's files in a folder of that name, so this is not sondage's`);
    const skip = lockNames(campaign);
    const names = (await readdir(folder, { withFileTypes: true })).filter((e) => !skip.has(e.name)).sort((a, b) => (a.name < b.name ? -1 : 1));
    const counts: PurgeCount[] = [];
    let looseFiles = 0;
    let looseBytes = 0;
    for (const e of names) {
      const full = path.join(folder, e.name);
      if (e.isDirectory()) {
        const t = await tally(full);
        counts.push({ what: `files in ${e.name}/`, count: t.files, bytes: t.bytes });
      } else {
        looseFiles += 1;
        looseBytes += (await lstat(full)).size;
      }
    }
    if (looseFiles > 0) counts.push({ what: 'files in the folder itself', count: looseFiles, bytes: looseBytes });
    // An empty sub-folder counts for nothing, but goes with the rest.
    return { where, counts, plan: names.map((e) => e.name) };
  }

  async purge(campaign: string, survey: PurgeSurvey<LocalPlan>, onProgress?: (deleted: number) => void): Promise<readonly PurgeCount[]> {
    const folder = this.folder(campaign);
    let deleted = 0;
    for (const [i, name] of survey.plan.entries()) {
      await rm(path.join(folder, name), { recursive: true, force: true });
      deleted += survey.counts.find((c) => c.what === `files in ${name}/`)?.count ?? 0;
      if (i % 8 === 7) onProgress?.(deleted);
    }
    return survey.counts;
  }
}
