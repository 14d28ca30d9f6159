/**
 * A local campaign whose stored readings were all checked against the design, and which nothing
 * has touched since, is not checked again: `sondage analyze` run twice, or a complete campaign run
 * again, passes over refreshCampaignReadings with one digest instead of building every
 * partition's items (a dependent phase's from its stored upstream) to compare their fingerprints —
 * at FAR-6's full size most of the seconds an analysis took before its first query.
 *
 * The digest (`campaigns/<c>/_readings/checked.digest`, outside every table) covers what the
 * check compares and what it reads:
 * - the campaign and its loaded design as JSON, the bytes of the data files the design names
 *   (designDataDigest.ts: a corrected gold letter or reading map) and every phase's reader and
 *   reader version;
 * - every file of every `replies` and `readings` table of the campaign, by key, size, modification
 *   time and inode. A run that adds a part, a readings part rewritten (by a run under another
 *   design, or by hand), a part removed: each changes the listing, and the next analysis checks
 *   every partition again, as it did before this digest existed.
 *
 * The digest is written after the check has rewritten what it had to, with the listing as the
 * check leaves it; a check killed halfway writes none, and the next analysis checks again. A run
 * writes it too when it ran every partition of every wave (each partition's readings are brought
 * in line before its calls start, wavePartition.ts) and stopped for nothing: a budget stop, an
 * abort or a failure leaves partitions unvisited, and the digest unwritten. What
 * it does not see: a change of how sondage builds items that keeps the readers' versions (such a
 * change bumps CHECK_FORMAT).
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { campaignPrefix } from '../store/layout.js';
import type { LocalBlobStore } from '../store/LocalBlobStore.js';
import type { RunContext } from './context.js';
import { designJson } from './completeCampaign.js';
import { designDataDigest } from './designDataDigest.js';
import { readerOf } from './readings.js';

/** Names the digest's contents; a change to them, or to how items are built, changes it. */
const CHECK_FORMAT = 'readings checked 1';

/** The tables whose parts a reading check reads (replies) or writes and builds dependent items from (readings). */
const CHECKED_TABLES = new Set(['replies', 'readings']);

/** Key of the digest of the campaign as its readings were last found in line with the design. */
export function readingsCheckedKey(campaign: string): string {
  return `${campaignPrefix(campaign)}_readings/checked.digest`;
}

/** The files of every replies and readings table under the campaign, each as `key size mtime inode`, in key order. */
async function tableListing(dataDir: string, campaign: string): Promise<string[]> {
  const root = join(dataDir, campaignPrefix(campaign));
  const lines: string[] = [];
  // campaigns/<c>/<phase or readings folder>/<table>/…
  for (const folder of (await readdir(root, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory())) {
    for (const table of CHECKED_TABLES) {
      const dir = join(root, folder.name, table);
      const names = (await readdir(dir, { recursive: true }).catch(() => [])) as string[];
      for (const name of names.sort()) {
        const info = await stat(join(dir, name)).catch(() => undefined);
        if (info === undefined || !info.isFile()) continue;
        lines.push(`${folder.name}/${table}/${name} ${info.size} ${info.mtimeMs} ${info.ino}`);
      }
    }
  }
  return lines;
}

/**
 * The digest of the design, the readers and the stored tables as they stand now; `data`: the
 * design's data files' digest (designDataDigest), where the caller has it already.
 */
export async function readingsCheckDigest(ctx: Pick<RunContext, 'campaign' | 'design' | 'battery' | 'graph'>, dataDir: string, data?: string): Promise<string> {
  const hash = createHash('sha256').update(`${CHECK_FORMAT}\u0000`);
  for (const part of [ctx.campaign, ctx.design]) hash.update(designJson(part)).update('\u0000');
  hash.update(data ?? (await designDataDigest(ctx))).update('\u0000');
  for (const phase of ctx.graph.phases) hash.update(`${readerOf(phase)}\u0000${ctx.graph.readingsFolder(phase)}\u0000`);
  for (const line of await tableListing(dataDir, ctx.campaign.name)) hash.update(`${line}\n`);
  return hash.digest('hex');
}

/**
 * Records that every stored reading of the campaign is in line with the design: after a full
 * check (refreshCampaignReadings), or a run that brought each partition in line before it asked
 * anything and stopped for nothing. Computed with the listing as it stands now, after their writes.
 */
export async function markReadingsChecked(store: LocalBlobStore, ctx: Parameters<typeof readingsCheckDigest>[0], dataDir: string, data?: string): Promise<void> {
  await store.put(readingsCheckedKey(ctx.campaign.name), await readingsCheckDigest(ctx, dataDir, data));
}

/** True when the marker holds `digest`: every stored reading was checked, and nothing changed since. */
export async function readingsCheckedAlready(store: LocalBlobStore, campaign: string, digest: string): Promise<boolean> {
  const held = await store.get(readingsCheckedKey(campaign));
  return held !== undefined && Buffer.from(held).toString('utf8') === digest;
}
