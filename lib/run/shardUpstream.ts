/**
 * The upstream of one dependent shard on the AWS worker (Lambda or GPU job): the stored parts it
 * needs copied from the store into its scratch folder, laid out like the bucket, and read with
 * the invocation's Parquet engine. Only the parts that may hold its slice are copied, and only
 * its slice's rows are kept (lib/run/upstreamSlice.ts says why this layout and not another).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PhaseSpec, Upstream } from '../battery/types.js';
import type { Shard } from '../config/pipeline.js';
import type { ModelEntry } from '../design/campaign.js';
import { partitionPrefix } from '../store/layout.js';
import type { BlobStore } from '../store/types.js';
import type { RunContext } from './context.js';
import type { ParquetSession } from './parquetIo.js';
import { PartitionItems } from './partitionItems.js';
import { upstreamNeeds } from './upstreamNeeds.js';
import { partMayHold, upstreamSliceOf } from './upstreamSlice.js';

/** What a dependent shard read of its upstream (logged by the worker; the bench prints it). */
export interface UpstreamRead {
  readonly upstream: Upstream;
  /** Parts copied, of the parts its partition has in the folders it needs. */
  readonly parts: number;
  readonly partsListed: number;
  /** Bytes copied from the store. */
  readonly bytes: number;
  /** Items of its slice the read was filtered to; undefined: the whole partition was read. */
  readonly sliceItems?: number;
}

/**
 * Reads the upstream of `shard` of the dependent phase `phase` into memory: its slice's rows of
 * the parts that may hold them (the whole partition for a phase cut by partition).
 */
export async function shardUpstream(
  ctx: RunContext,
  store: BlobStore,
  io: Pick<ParquetSession, 'upstream'>,
  root: string,
  phase: PhaseSpec,
  model: ModelEntry,
  shard: Shard,
): Promise<UpstreamRead> {
  const needs = upstreamNeeds(ctx.graph, phase);
  const slice = upstreamSliceOf(ctx.graph, phase, shard, () => new PartitionItems({ ctx, model, language: shard.language, slice: { phase: phase.after[0]!.phase, start: shard.start, end: shard.end } }).items(phase.after[0]!.phase));
  const folders: { folder: string; table: 'replies' | 'readings' }[] = [
    ...[...needs.replies].map((folder) => ({ folder, table: 'replies' as const })),
    ...[...needs.readings.keys()].map((folder) => ({ folder, table: 'readings' as const })),
  ];
  let parts = 0;
  let partsListed = 0;
  let bytes = 0;
  for (const { folder, table } of folders) {
    for (const key of await store.list(partitionPrefix(ctx.campaign.name, folder, table, shard.model, shard.language))) {
      if (!key.endsWith('.parquet')) continue;
      partsListed++;
      if (slice !== undefined && !partMayHold(ctx.graph, key, folder, slice)) continue;
      const body = await store.get(key);
      if (body === undefined) continue;
      parts++;
      bytes += body.byteLength;
      await mkdir(dirname(join(root, key)), { recursive: true });
      await writeFile(join(root, key), body);
    }
  }
  // Read into memory, then the copies go: the next shard of the invocation has /tmp to itself.
  const upstream = await io.upstream(root, ctx.campaign.name, needs, shard.model, shard.language, slice).finally(() => rm(root, { recursive: true, force: true }));
  return { upstream, parts, partsListed, bytes, ...(slice ? { sliceItems: slice.ids.size } : {}) };
}
