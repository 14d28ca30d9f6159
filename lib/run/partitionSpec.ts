/**
 * What one (phase, model, language) partition needs to run, built the same way for the local run
 * (runCampaign) and the Lambda worker (functions/worker): prices and reservations, how a reply is
 * read, where its parts go (a BlobStore through a ParquetWriter) and where its journals live.
 * One builder, so that the two paths cannot drift in what they charge or store.
 */
import { join } from 'node:path';
import type { Campaign } from '../design/campaign.js';
import type { LanguageCode, PromptItem } from '../core/types.js';
import { BudgetError } from '../errors.js';
import type { BatchClient } from '../providers/batchTypes.js';
import { costUsd, estimatePromptTokens } from '../pricing/pricing.js';
import type { ModelProvider, Price } from '../providers/types.js';
import { partKey } from '../store/layout.js';
import type { PartTarget, PartWriter } from '../store/parquetParts.js';
import { moveObject, stagedKey } from '../store/stagedParts.js';
import { promptColumns, promptRow } from '../store/schemas.js';
import type { PromptColumns, PromptRow } from '../store/schemas.js';
import type { BlobStore, ReadingRow, ReplyRow } from '../store/types.js';
import type { Plan } from './planCampaign.js';
import { itemMaxCost } from './cost.js';
import type { RateLimiters } from './RateLimiter.js';
import { withRateLimit } from './RateLimiter.js';
import { itemsDigest } from './readings.js';
import type { SlicedItems } from './slicedItems.js';
import type { PartSink, PartitionSpec } from './partitionTypes.js';

/** The fields every partition of one run shares (ledger, bounds, retry policy, stop flag). */
export type SharedPartitionFields = Pick<
  PartitionSpec,
  'campaign' | 'runId' | 'retry' | 'ledger' | 'semaphore' | 'chunkSize' | 'partRows' | 'partMs' | 'signal' | 'onReply' | 'stop' | 'retryFailed' | 'mayStartCall' | 'watch' | 'onUnanswered'
>;

export interface PartitionSetup {
  readonly phase: string;
  /** Where the phase's readings are stored (PhaseGraph.readingsFolder). */
  readonly readingsFolder: string;
  /** The model whose replies these are (for the judge phase, the judged model). */
  readonly model: string;
  readonly language: LanguageCode;
  /** The partition's items, or (a dependent phase's in the local run) its slices (lib/run/slicedItems.ts). */
  readonly items: readonly PromptItem[] | SlicedItems;
  readonly provider: ModelProvider;
  readonly price: Price;
  /** Present when the partition runs through the provider's batch API (`mode: batch`). */
  readonly batch?: BatchClient | undefined;
  readReply(item: PromptItem, reply: ReplyRow): ReadingRow[];
  readonly store: BlobStore;
  readonly writer: PartWriter;
  /** The partition's journal folder (journalDir below, or a per-shard folder on Lambda). */
  readonly journalDir: string;
  /** The variable holding the provider's API key (the entry's `api_key_env`), named if the provider rejects the key. */
  readonly keyEnv?: string | undefined;
  /** The model's attempt timeout in seconds (`models[].timeout_s`); the shared retry policy's when absent. */
  readonly timeoutS?: number | undefined;
}

/**
 * The spec runPartition / runBatchPartition take for one partition. `mode: batch` reserves and
 * charges at the batch price (the provider bills the batch at its discount).
 */
export function partitionSpec<I extends PartitionSetup['items']>(shared: SharedPartitionFields, p: PartitionSetup & { readonly items: I }): PartitionSpec & { readonly items: I } {
  const batch = p.batch !== undefined;
  const discount = batch ? (p.price.batch_discount ?? 1) : 1;
  return {
    ...shared,
    ...(p.timeoutS !== undefined ? { retry: { ...shared.retry, timeoutMs: p.timeoutS * 1000 } } : {}),
    phase: p.phase,
    model: p.model,
    language: p.language,
    items: p.items,
    provider: p.provider,
    price: p.price,
    maxCost: (item: PromptItem) => itemMaxCost(item, p.price) * discount,
    cost: (usage: { input_tokens: number; output_tokens: number }) => costUsd(p.price, usage, { batch }),
    readReply: p.readReply,
    journalDir: p.journalDir,
    ...(p.keyEnv !== undefined ? { keyEnv: p.keyEnv } : {}),
    sink: partSink(p.writer, p.store, shared.campaign, p.phase, p.readingsFolder, p.model, p.language),
  };
}

/** Where a partition's journals live under a local root: `<root>/campaigns/<c>/<phase>/_journal/model=…/language=…`. */
export function journalDir(root: string, campaign: string, phase: string, model: string, language: LanguageCode): string {
  return join(root, 'campaigns', campaign, phase, '_journal', `model=${model}`, `language=${language}`);
}

/**
 * Parts of one partition written through `writer` into `store`, under the layout's keys; readings
 * go to `readingsFolder` (a judge's beside the readings of the replies it reads). Both wait under
 * the phase's `_staged/` folder, outside every table, until the part's ledger commit; `publish`
 * then moves them into the tables (lib/store/stagedParts.ts), so that no query counts a reply the
 * ledger has not.
 */
export function partSink(writer: PartWriter, store: BlobStore, campaign: string, phase: string, readingsFolder: string, model: string, language: LanguageCode): PartSink {
  const replies = (partName: string): PartTarget => ({ campaign, phase, table: 'replies', model, language, partName, stagedFor: phase });
  const readings = (partName: string): PartTarget => ({ campaign, phase: readingsFolder, table: 'readings', model, language, partName, stagedFor: phase });
  return {
    writeReplies: async (journalPath, partName, rows) => {
      // The rows the journal holds, still in memory: appended as they are, not parsed back from it.
      if (rows) await writer.writePart(store, replies(partName), rows, { trusted: true });
      else await writer.convertPart(store, replies(partName), journalPath);
      // The key the ledger commits, and the part will have once published.
      return partKey(campaign, phase, 'replies', model, language, partName);
    },
    partKey: (partName) => partKey(campaign, phase, 'replies', model, language, partName),
    writeReadings: async (rows, partName) => {
      if (rows.length > 0) await writer.writePart(store, readings(partName), rows, { trusted: true });
    },
    publish: async (partName) => {
      // A move cut short (a kill) is finished by publishCommitted, which finds the staged objects left.
      const finals = [partKey(campaign, readingsFolder, 'readings', model, language, partName), partKey(campaign, phase, 'replies', model, language, partName)];
      for (const key of finals) await moveObject(store, stagedKey(phase, key), key);
    },
  };
}

/** The prompts part of every partition: one, written from the plan's items. */
export const PROMPTS_PART = 'part-plan.parquet';

/**
 * Where the digest of a prompts part is kept: outside the tables' locations (as the `_registered`
 * and `_shards` markers), so no query reads it.
 */
export function promptsDigestKey(campaign: string, phase: string, model: string, language: LanguageCode, partName: string): string {
  return `campaigns/${campaign}/${phase}/_prompts/model=${model}/language=${language}/${partName}.digest`;
}

/** A digest of what a prompts part holds that can change: each item's id (which hashes the request) and extras. */
function promptsDigest(items: readonly PromptItem[]): string {
  return itemsDigest(items);
}

/**
 * Writes the prompts part `partName` of a partition, unless the part already holds these items
 * (its digest says so). A changed design (a language, repeats, a template, the data's gold)
 * rewrites it, so that the analysis reads the design the campaign file has now; the replies of
 * items it dropped stay stored, and no query joins them to a prompt any more. A partition the
 * design left without items loses its prompts part. Returns whether the part was written.
 */
export async function ensurePrompts(
  writer: PartWriter,
  store: BlobStore,
  target: { readonly campaign: string; readonly phase: string; readonly model: string; readonly language: LanguageCode; readonly partName?: string },
  items: readonly PromptItem[],
  columns: PromptColumns,
): Promise<boolean> {
  const { campaign, phase, model, language } = target;
  const partName = target.partName ?? PROMPTS_PART;
  const key = partKey(campaign, phase, 'prompts', model, language, partName);
  const marker = promptsDigestKey(campaign, phase, model, language, partName);
  if (items.length === 0) {
    if (await store.exists(key)) {
      await store.delete(key);
      await store.delete(marker);
    }
    return false;
  }
  const digest = promptsDigest(items);
  const held = await store.get(marker);
  if (held !== undefined && Buffer.from(held).toString('utf8') === digest && (await store.exists(key))) return false;
  // A role's items partition with the replies they read: the model under test, not the judge.
  // Streamed to the writer, as a sliced partition's rows are: held in one array, a whole
  // partition's rows, each with its messages' JSON, outlived the collector's young generation
  // (X-Value at 30,000 pairs on one thread: the first wave's peak RSS 547-552 MiB, not 616-635,
  // and 2% less CPU, though the writer no longer finds the columns every row shares).
  const rows = (function* () {
    for (const item of items) yield promptRow(item, columns, model);
  })();
  await writer.writePart(store, { campaign, phase, table: 'prompts', model, language, partName }, rows, { trusted: true, columns: promptColumns(columns) });
  await store.put(marker, digest);
  return true;
}

/**
 * ensurePrompts for a partition given in slices (lib/run/slicedItems.ts): the same part, marker
 * and cases, but the rows come from the slices as each is expanded, never from the whole partition
 * at once, and the partition is indexed on the way (`items.index`). A part not there yet (a fresh
 * run) is written from the index pass itself; one that is there is compared by digest after it,
 * and written from a second pass over the slices when the design changed. `indexed` resolves once
 * the index is complete (the part may still be on its way to disk); `written`, as ensurePrompts.
 */
export function ensureSlicedPrompts(
  writer: PartWriter,
  store: BlobStore,
  target: { readonly campaign: string; readonly phase: string; readonly model: string; readonly language: LanguageCode },
  items: SlicedItems,
  maxCost: (item: PromptItem) => number,
  columns: PromptColumns,
): { readonly indexed: Promise<void>; readonly written: Promise<boolean> } {
  const { campaign, phase, model, language } = target;
  const partName = PROMPTS_PART;
  const key = partKey(campaign, phase, 'prompts', model, language, partName);
  const marker = promptsDigestKey(campaign, phase, model, language, partName);
  const part = { campaign, phase, table: 'prompts' as const, model, language, partName };
  const options = { trusted: true, columns: promptColumns(columns) };
  let indexed!: () => void;
  let refused!: (err: unknown) => void;
  const index = new Promise<void>((resolve, reject) => ((indexed = resolve), (refused = reject)));
  function* rows(slices: Iterable<readonly PromptItem[]>, end?: () => void): Generator<PromptRow> {
    for (const slice of slices) for (const item of slice) yield promptRow(item, columns, model);
    end?.();
  }
  const written = (async (): Promise<boolean> => {
    if (!(await store.exists(key))) {
      await writer.writePart(store, part, rows(items.index(maxCost), indexed), options);
      return settlePromptsPart(store, part, items.size, items.digest);
    }
    for (const slice of items.index(maxCost)) void slice;
    indexed();
    if (items.size === 0) {
      await store.delete(key);
      await store.delete(marker);
      return false;
    }
    const held = await store.get(marker);
    if (held !== undefined && Buffer.from(held).toString('utf8') === items.digest) return false;
    await writer.writePart(store, part, rows(items.slices()), options);
    await store.put(marker, items.digest);
    return true;
  })();
  written.catch(refused);
  return { indexed: index, written };
}

/**
 * The end of writing a partition's prompts part from its items, as they were taken: a partition
 * without items keeps no part (ensurePrompts writes none) and no marker; one with items gets the
 * marker with their digest, which says the part holds them. Returns whether a part stays.
 */
export async function settlePromptsPart(
  store: BlobStore,
  target: { readonly campaign: string; readonly phase: string; readonly model: string; readonly language: LanguageCode; readonly partName: string },
  items: number,
  digest: string,
): Promise<boolean> {
  const { campaign, phase, model, language, partName } = target;
  if (items === 0) {
    await store.delete(partKey(campaign, phase, 'prompts', model, language, partName));
    await store.delete(promptsDigestKey(campaign, phase, model, language, partName));
    return false;
  }
  await store.put(promptsDigestKey(campaign, phase, model, language, partName), digest);
  return true;
}

/** Refuses a campaign whose expected cost passes its cap (DESIGN.md "Cost and safety rails"). */
export function assertWithinBudget(campaign: Campaign, plan: Plan, allowPartial = false): void {
  if (plan.totals.costUsd > campaign.budget_usd && !allowPartial) {
    throw new BudgetError(
      `${campaign.name}: the expected cost $${plan.totals.costUsd.toFixed(4)} exceeds budget_usd $${campaign.budget_usd}; ` +
        'raise budget_usd, shrink the design, or pass --allow-partial to run until the cap',
    );
  }
}

/**
 * A real provider behind the limiter of its provider model (RPM/TPM as given, lowered by the
 * x-ratelimit headers it reports); the simulated one needs none. The Lambda worker passes its
 * share of the campaign's RPM (functions/worker).
 */
export function rateLimited(limiters: RateLimiters, provider: ModelProvider, limits: { readonly rpm?: number | undefined; readonly tpm?: number | undefined }): ModelProvider {
  if (provider.simulated) return provider;
  return withRateLimit(
    provider,
    limiters.get(provider.id, { ...(limits.rpm ? { rpm: limits.rpm } : {}), ...(limits.tpm ? { tpm: limits.tpm } : {}) }),
    (req) => estimatePromptTokens(req.messages, req.item?.language ?? 'en') + (req.settings.max_tokens ?? 0),
  );
}
