/**
 * Stored readings brought in line with the design before an analysis (`sondage analyze`): every
 * partition of every phase, in the order of the phase graph, through refreshReadings — what a run
 * does before it asks anything, without asking anything. A dependent phase's items are built from
 * the stored outputs of the phases before it, as the run builds them. A campaign checked before and
 * not touched since is passed over (readingsChecked.ts).
 */
import { join } from 'node:path';
import { DuckDb } from '../store/DuckDb.js';
import { LocalBlobStore } from '../store/LocalBlobStore.js';
import { ParquetWriter } from '../store/ParquetWriter.js';
import type { RunContext } from './context.js';
import { designDataDigest } from './designDataDigest.js';
import { markReadingsChecked, readingsCheckDigest, readingsCheckedAlready } from './readingsChecked.js';
import { refreshPartitionReadings } from './refreshPartitionReadings.js';
import { loadUpstream, upstreamNeeds } from './upstream.js';

/** What was read again in one phase: readings, and how many of them changed. */
export interface PhaseReread {
  readonly phase: string;
  readonly reread: number;
  readonly rereadChanged: number;
}

/** Reads again the stored readings of a local campaign whose design data changed; one entry per phase that had any. */
export async function refreshCampaignReadings(ctx: RunContext, dataDir: string): Promise<PhaseReread[]> {
  const { campaign, graph } = ctx;
  const store = new LocalBlobStore(dataDir);
  const data = await designDataDigest(ctx);
  if (await readingsCheckedAlready(store, campaign.name, await readingsCheckDigest(ctx, dataDir, data))) return [];
  const writer = await ParquetWriter.create({ tmpDir: join(dataDir, '.tmp'), threads: 1 });
  let db: DuckDb | undefined;
  const out: PhaseReread[] = [];
  try {
    for (const phase of graph.waves.flat()) {
      let reread = 0;
      let rereadChanged = 0;
      for (const model of campaign.models) {
        for (const language of ctx.design.languages) {
          const upstream = phase.after.length > 0 ? await loadUpstream((db ??= await DuckDb.open()), dataDir, campaign.name, upstreamNeeds(graph, phase), model.id, language) : undefined;
          const r = await refreshPartitionReadings({ ctx, store, writer, phase, model, language, upstream });
          reread += r.reread;
          rereadChanged += r.changed;
        }
      }
      if (reread > 0) out.push({ phase: phase.name, reread, rereadChanged });
    }
    // With the listing as the check leaves it: the parts it rewrote are the ones now in line.
    await markReadingsChecked(store, ctx, dataDir, data);
  } finally {
    db?.close();
    await writer.close();
  }
  return out;
}
