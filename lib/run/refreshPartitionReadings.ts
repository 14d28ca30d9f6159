/**
 * One partition's stored readings brought in line with the design, outside a run: its items built
 * as the run builds them (a dependent phase's from `upstream`), then refreshReadings with the
 * phase's own reader. The local analysis (refreshCampaignReadings.ts) and the AWS plan
 * (rereadStoredReadings.ts) differ only in where the upstream comes from.
 */
import type { PhaseSpec, Upstream } from '../battery/types.js';
import type { LanguageCode } from '../core/types.js';
import { forgetSharedValues } from '../core/hash.js';
import type { ModelEntry } from '../design/campaign.js';
import type { PartWriter } from '../store/parquetParts.js';
import type { BlobStore } from '../store/types.js';
import type { RunContext } from './context.js';
import { PartitionItems } from './partitionItems.js';
import { readingRows } from './readings.js';
import { refreshReadings } from './refreshReadings.js';
import type { ReadingsRefresh } from './refreshReadings.js';

export interface PartitionReadingsTarget {
  readonly ctx: RunContext;
  readonly store: BlobStore;
  readonly writer: PartWriter;
  readonly phase: PhaseSpec;
  readonly model: ModelEntry;
  readonly language: LanguageCode;
  /** A dependent phase's stored upstream outputs of this partition; undefined for a root phase. */
  readonly upstream: Upstream | undefined;
}

export async function refreshPartitionReadings(t: PartitionReadingsTarget): Promise<ReadingsRefresh> {
  const { ctx, phase, model, language } = t;
  const folder = ctx.graph.readingsFolder(phase);
  // What the caches kept of this partition's design data goes with it (lib/core/hash.ts).
  return refreshReadings({
    store: t.store,
    writer: t.writer,
    campaign: ctx.campaign.name,
    phase,
    folder,
    model: model.id,
    language,
    items: new PartitionItems({ ctx, model, language, upstream: t.upstream }).items(phase.name),
    readReply: (item, reply) => readingRows(phase, folder, ctx.battery.vocabulary, item, reply),
  }).finally(forgetSharedValues);
}
