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
import type { BlobStore, ReadingRow, ReplyRow } from '../store/types.js';
import type { Plan } from './planCampaign.js';
import { itemMaxCost } from './cost.js';
import type { RateLimiters } from './RateLimiter.js';
import { withRateLimit } from './RateLimiter.js';
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
