/**
 * A digest of the bytes of the data files a campaign's design names (a P(True) items file, FAR-6's
 * stories and concept pairs, X-Value's pairs): the files the battery lists (Battery.dataFiles), a
 * folder walked in name order. The loaded design keeps what it read of them in closures, which a
 * JSON fingerprint of the design does not see; a corrected gold letter or reference answer must
 * still count as a changed design (lib/run/completeCampaign.ts: a judge's prompt holds the
 * reference, so the correction makes new judge items to ask).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { RunContext } from './context.js';

async function filesUnder(entry: string): Promise<string[]> {
  const info = await stat(entry).catch(() => undefined);
  if (info === undefined) return [];
  if (!info.isDirectory()) return [entry];
  const out: string[] = [];
  for (const name of (await readdir(entry)).sort()) out.push(...(await filesUnder(join(entry, name))));
  return out;
}

/** The digest (hex) of every data file the design names, by path relative to the campaign file and content. */
export async function designDataDigest(ctx: Pick<RunContext, 'campaign' | 'battery'>): Promise<string> {
  const folder = dirname(ctx.campaign.file);
  const hash = createHash('sha256');
  for (const { field, file } of ctx.battery.dataFiles(ctx.campaign.design as never)) {
    for (const path of await filesUnder(resolve(folder, file))) {
      const body = await readFile(path);
      hash.update(`${field}\u0000${path.slice(folder.length)}\u0000${body.byteLength}\u0000`).update(body);
    }
  }
  return hash.digest('hex');
}
