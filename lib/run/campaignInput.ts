/**
 * The uploaded campaign (`campaigns/<c>/input/`: campaign.yaml and the files it names, same relative
 * paths) copied to local disk and loaded with the CLI's loader, so a campaign runs on AWS exactly as
 * it validates locally, and a bad file fails the plan with the same message. The Lambda handlers and
 * `sondage results` read it so.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CAMPAIGN_FILE_NAME } from '../config/pipeline.js';
import { PREFIX } from '../config/index.js';
import { SondageError } from '../errors.js';
import { assertSafeSegment } from '../store/layout.js';
import type { BlobStore } from '../store/types.js';
import { loadRunContext } from './context.js';
import type { RunContext } from './context.js';

/** Key prefix of a campaign's uploaded input. */
export function inputPrefix(campaign: string): string {
  assertSafeSegment('campaign', campaign);
  return `${PREFIX.campaigns}${campaign}/input/`;
}

/**
 * Downloads the campaign's input under `dir` (keys kept as paths, so error messages name
 * `…/campaigns/<c>/input/campaign.yaml`) and loads it. The campaign's `name` must be the folder it
 * was uploaded to: the ledger, the Parquet keys and the Athena filters all use the name.
 */
export async function downloadCampaign(store: BlobStore, campaign: string, dir: string): Promise<RunContext> {
  const prefix = inputPrefix(campaign);
  const keys = await store.list(prefix);
  if (!keys.includes(`${prefix}${CAMPAIGN_FILE_NAME}`)) {
    throw new SondageError(`campaign ${JSON.stringify(campaign)}: no ${prefix}${CAMPAIGN_FILE_NAME} in the bucket; upload the campaign first (sondage start --aws)`);
  }
  await Promise.all(
    keys.map(async (key) => {
      const body = await store.get(key);
      if (body === undefined) return;
      const path = join(dir, key);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, body);
    }),
  );
  const file = join(dir, prefix, CAMPAIGN_FILE_NAME);
  const ctx = await loadRunContext(file, join(dir, 'data'));
  if (ctx.campaign.name !== campaign) {
    throw new SondageError(
      `${prefix}${CAMPAIGN_FILE_NAME}: name is ${JSON.stringify(ctx.campaign.name)} but the campaign was uploaded as ${JSON.stringify(campaign)}; ` +
        'upload it under its own name',
    );
  }
  return ctx;
}

/**
 * downloadCampaign once per container and execution: a worker invoked again (the Wait loop, the
 * next shards) reuses the copy; a new execution reads the input afresh (it may have been re-uploaded).
 */
export function campaignCache(store: BlobStore, tmpDir: string): (campaign: string, execution: string) => Promise<RunContext> {
  const cache = new Map<string, Promise<RunContext>>();
  return (campaign, execution) => {
    const id = `${campaign}\u0000${execution}`;
    let ctx = cache.get(id);
    if (!ctx) {
      ctx = downloadCampaign(store, campaign, join(tmpDir, 'sondage-input', safeName(execution)));
      ctx.catch(() => cache.delete(id));
      cache.set(id, ctx);
    }
    return ctx;
  };
}

function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '_');
}
