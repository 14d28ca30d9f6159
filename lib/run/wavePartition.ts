/**
 * One (phase, model, language) partition of a wave of the local run, from its items to its
 * committed parts: the same code on the main thread and in a partition thread
 * (partitionThreads.ts), so that where a partition runs changes nothing it asks, stores or
 * charges.
 */
import type { PhaseSpec } from '../battery/types.js';
import type { LanguageCode, PromptItem } from '../core/types.js';
import type { ModelEntry } from '../design/campaign.js';
import type { BatchClient } from '../providers/batchTypes.js';
import type { ModelProvider } from '../providers/types.js';
import type { DuckDb } from '../store/DuckDb.js';
import type { PartWriter } from '../store/parquetParts.js';
import type { BatchRecord, BlobStore, ReplyRow } from '../store/types.js';
import { forgetSharedValues } from '../core/hash.js';
import { priceIn } from './context.js';
import type { RunContext } from './context.js';
import { journalDir, partitionSpec } from './partitionSpec.js';
import { ensurePrompts, ensureSlicedPrompts } from './promptsPart.js';
import type { SharedPartitionFields } from './partitionSpec.js';
import { PartitionItems } from './partitionItems.js';
import { readingRows } from './readings.js';
import { refreshReadings } from './refreshReadings.js';
import { runBatchPartition } from './runBatchPartition.js';
import { runOnePass, slicesOf, unbegun } from './onePassPartition.js';
import { runPartition } from './runPartition.js';
import { SLICE_SOURCE_ITEMS, SlicedItems, sliceableBySource } from './slicedItems.js';
import type { PartitionOutcome } from './partitionTypes.js';
import { loadUpstream, upstreamNeeds } from './upstream.js';

/** Batches take minutes to hours: polling more often than this only spends API calls. */
export const DEFAULT_BATCH_POLL_MS = 30_000;

/** How `mode: batch` partitions poll and submit (RunOptions.batch). */
export interface BatchRunOptions {
  readonly pollMs?: number;
  /** At most this many requests per batch, below the provider's limits. */
  readonly maxRequests?: number;
  /** Called once a batch is submitted and written to the ledger. */
  readonly onSubmitted?: (record: BatchRecord) => void;
}

/** What running a partition needs of the run around it. */
export interface PartitionEnv {
  readonly ctx: RunContext;
  readonly dataDir: string;
  readonly store: BlobStore;
  readonly writer: PartWriter;
  readonly providers: ReadonlyMap<string, ModelProvider>;
  readonly batchClients: ReadonlyMap<string, BatchClient>;
  /** Ledger, bounds, retry policy and stop flag; `onReply` sees every journaled attempt. */
  readonly shared: SharedPartitionFields;
  /** The DuckDB that reads a dependent phase's upstream rows, opened on first use. */
  upstreamDb(): Promise<DuckDb>;
  readonly batch?: BatchRunOptions | undefined;
  /** Source items per slice of a dependent phase's partition, and root items per slice of an unbegun one (RunOptions.sliceSources; SLICE_SOURCE_ITEMS by default). */
  readonly sliceSources?: number | undefined;
  /** False: every partition takes the two-pass way, an unbegun one too (RunOptions.onePass; tests compare the two). */
  readonly onePass?: boolean | undefined;
}

/**
 * Runs one partition: its items (a dependent phase's built from the stored outputs of the phases
 * it consumes), its prompts part, and its budget-guarded calls. Returns how many items it has and
 * what became of them.
 */
export async function runWavePartition(env: PartitionEnv, phase: PhaseSpec, model: ModelEntry, language: LanguageCode): Promise<{ items: number; outcome: PartitionOutcome }> {
  const { ctx, dataDir, store, writer } = env;
  const { campaign, graph, battery } = ctx;
  const upstream = phase.after.length > 0 ? await loadUpstream(await env.upstreamDb(), dataDir, campaign.name, upstreamNeeds(graph, phase), model.id, language) : undefined;
  const partition = new PartitionItems({ ctx, model, language, upstream });
  const entry = partition.answerer(phase).entry;
  const batch = env.batchClients.get(entry.id);
  const folder = graph.readingsFolder(phase);
  const sliceSources = env.sliceSources ?? SLICE_SOURCE_ITEMS;
  const readReply = (item: PromptItem, reply: ReplyRow) => readingRows(phase, folder, battery.vocabulary, item, reply);
  const setup = {
    phase: phase.name,
    readingsFolder: folder,
    model: model.id,
    language,
    provider: env.providers.get(entry.id)!,
    price: priceIn(ctx, phase, entry),
    batch,
    readReply,
    store,
    writer,
    journalDir: journalDir(dataDir, campaign.name, phase.name, model.id, language),
    keyEnv: entry.api_key_env,
    timeoutS: entry.timeout_s,
  };
  const onePass = { store, ledger: env.shared.ledger, campaign: campaign.name, phase, model: model.id, language, journalDir: setup.journalDir };
  if (!batch && env.onePass !== false && (await unbegun(onePass))) {
    const spec = { ...partitionSpec(env.shared, { ...setup, items: [] }), wholePartition: true };
    const ran = await runOnePass(onePass, spec, onePassSlices(partition, phase, sliceSources), { writer, columns: battery.prompts });
    forgetSharedValues();
    return { items: ran.items, outcome: ran.outcome };
  }
  const items = batch ? partition.items(phase.name) : slicedOrWhole(partition, phase, sliceSources);
  const whole = items instanceof SlicedItems ? undefined : items;
  const spec = { ...partitionSpec(env.shared, { ...setup, items }), wholePartition: true };
  // Root prompts are a pure function of the design: written once. A dependent phase's depend on
  // the replies it reads, which a later run may have completed: rewritten. Written while the calls
  // run (DuckDB writes the file on its own threads): the analysis reads them once the run is over,
  // and a run that fails or is killed before they are written writes them the next time. A
  // partition in slices is indexed as its prompts are staged, before anything is asked.
  const target = { campaign: campaign.name, phase: phase.name, model: model.id, language };
  const { indexed, written } =
    items instanceof SlicedItems
      ? ensureSlicedPrompts(writer, store, target, items, spec.maxCost, battery.prompts, spec.partRows)
      : { indexed: Promise.resolve(), written: ensurePrompts(writer, store, target, items, battery.prompts, spec.partRows) };
  const prompts = written.then(
    () => undefined,
    (err: unknown) => ({ err }),
  );
  await indexed;
  // Stored readings the current design would read otherwise are read again before new calls start.
  const refreshed = await refreshReadings({ store, writer, campaign: campaign.name, phase, folder, model: model.id, language, items, readReply: spec.readReply });
  // A batch partition is never sliced: its items are whole.
  const ran = await (batch && whole
    ? runBatchPartition({
        ...spec,
        items: whole,
        batch,
        pollMs: env.batch?.pollMs ?? DEFAULT_BATCH_POLL_MS,
        ...(env.batch?.maxRequests !== undefined ? { maxBatchRequests: env.batch.maxRequests } : {}),
        ...(env.batch?.onSubmitted ? { onBatchSubmitted: env.batch.onSubmitted } : {}),
      })
    : runPartition(spec)
  ).finally(() => prompts);
  const failed = await prompts;
  forgetSharedValues();
  if (failed) throw failed.err;
  const outcome = refreshed.reread > 0 ? { ...ran, reread: refreshed.reread, rereadChanged: refreshed.changed } : ran;
  return { items: items instanceof SlicedItems ? items.size : items.length, outcome };
}

/**
 * The slices an unbegun partition is asked in, one pass (lib/run/onePassPartition.ts): a root
 * phase's items `sliceSources` at a time as they are expanded; a dependent phase's from
 * `sliceSources` of its source items at a time where it may be cut by source, else whole. The
 * source items too are expanded as the slices are taken, not held whole: at three times FAR-6's
 * full design a judge partition's 61,000 generate items were ~30 MB of each partition thread's heap
 * for the whole of the partition.
 */
function* onePassSlices(partition: PartitionItems, phase: PhaseSpec, sliceSources: number): Generator<readonly PromptItem[]> {
  if (phase.after.length === 0) {
    yield* slicesOf(partition.each(phase.name), sliceSources);
    return;
  }
  if (!sliceableBySource(phase)) {
    yield partition.items(phase.name);
    return;
  }
  for (const sources of slicesOf(partition.each(partition.sourceOf(phase.name)), sliceSources)) yield partition.itemsBuiltFrom(phase.name, sources);
}

/**
 * A dependent phase's partition in slices of `sliceSources` source items (lib/run/slicedItems.ts)
 * when it may be cut by source and has more source items than one slice; otherwise its items, whole.
 */
function slicedOrWhole(partition: PartitionItems, phase: PhaseSpec, sliceSources: number): readonly PromptItem[] | SlicedItems {
  if (!sliceableBySource(phase)) return partition.items(phase.name);
  const sources = partition.items(partition.sourceOf(phase.name)).length;
  if (sources <= sliceSources) return partition.items(phase.name);
  return new SlicedItems((k) => partition.itemsFromSources(phase.name, k * sliceSources, Math.min(sources, (k + 1) * sliceSources)), Math.ceil(sources / sliceSources));
}
