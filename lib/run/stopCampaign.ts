import { campaignEntries } from '../design/campaign.js';
import type { Campaign, ModelEntry } from '../design/campaign.js';
import type { BatchClient, BatchHandle } from '../providers/batchTypes.js';
import { createBatchClient } from '../providers/registry.js';
import type { ProviderContext } from '../providers/entry.js';
import type { BatchRecord, Ledger } from '../store/types.js';

export interface StopCampaignOptions {
  readonly ledger: Ledger;
  readonly campaign: string;
  /** Batch clients by id (`openai/gpt-4.1-mini`, a handle's `provider`); `batchClientsFor` builds them. */
  readonly clients: ReadonlyMap<string, BatchClient>;
  /** The time written as the cancel request's; tests fix it. */
  readonly now?: () => Date;
  readonly signal?: AbortSignal;
}

/** One batch `stopCampaign` dealt with. */
export interface StoppedBatch {
  readonly batchId: string;
  readonly provider: string;
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  /**
   * `cancelled`: the provider was asked to cancel it; `ended`: it had already ended (its results
   * wait for the next run); `lost`: the provider no longer knows it (the next run re-queues its
   * requests); `failed`: the cancel request failed (see `message`), the batch runs on.
   */
  readonly outcome: 'cancelled' | 'ended' | 'lost' | 'failed';
  readonly message?: string;
}

export interface StopCampaignResult {
  readonly batches: readonly StoppedBatch[];
  /**
   * Submission intents whose batch could not be identified yet (an Anthropic batch of a killed
   * run, still running): not cancelled; the next run looks them up again.
   */
  readonly undetermined: readonly { readonly submissionKey: string; readonly provider: string; readonly reason: string }[];
  /** Providers with open batches but no client in `clients` (a campaign file changed since). */
  readonly missingClients: readonly string[];
}

/**
 * Cancels the provider batches a campaign has open (`sondage stop`): OpenAI `batches.cancel`, Anthropic `messages.batches.cancel`, after resolving
 * the submission intents a killed run left (a batch found is recorded first, so it is cancelled
 * too; one never created has its intent dropped). Each cancelled batch is marked in the ledger and
 * stays open there: a cancelled batch ends with partial results, and the next `sondage run`
 * re-attaches to it, stores what came back and re-queues the requests that never ran. Nothing
 * collected is lost. A cancel that fails is reported, not thrown, so one provider's outage does
 * not leave the others' batches running.
 *
 * @example
 * const clients = await batchClientsFor(campaign, { seed: campaign.seed, file: campaign.file });
 * const result = await stopCampaign({ ledger, campaign: campaign.name, clients });
 */
export async function stopCampaign(opts: StopCampaignOptions): Promise<StopCampaignResult> {
  const { ledger, campaign, clients, signal } = opts;
  const now = opts.now ?? (() => new Date());
  const missing = new Set<string>();
  const undetermined: { submissionKey: string; provider: string; reason: string }[] = [];

  const open = await ledger.campaignBatches(campaign);
  for (const intent of await ledger.campaignBatchIntents(campaign)) {
    const client = clients.get(intent.provider);
    if (!client) {
      missing.add(intent.provider);
      continue;
    }
    const exclude = new Set(open.map((b) => b.batchId));
    const found = await client.find({ submissionKey: intent.submissionKey, customIds: intent.customIds, createdAt: intent.createdAt, exclude }, signal);
    if (found.status === 'absent') await ledger.dropBatchIntent(campaign, intent.submissionKey);
    else if (found.status === 'undetermined') undetermined.push({ submissionKey: intent.submissionKey, provider: intent.provider, reason: found.reason });
    else {
      const record: BatchRecord = {
        campaign,
        phase: intent.phase,
        model: intent.model,
        language: intent.language,
        batchId: found.handle.batchId,
        handleJson: JSON.stringify(found.handle),
        reservationId: intent.reservationId,
        submissionKey: intent.submissionKey,
      };
      await ledger.recordBatch(record);
      open.push(record);
    }
  }

  const batches: StoppedBatch[] = [];
  for (const record of open) {
    const handle = JSON.parse(record.handleJson) as BatchHandle;
    const client = clients.get(handle.provider);
    if (!client) {
      missing.add(handle.provider);
      continue;
    }
    const base = { batchId: record.batchId, provider: handle.provider, phase: record.phase, model: record.model, language: record.language };
    try {
      const state = await client.poll(handle, signal);
      if (state.done) {
        batches.push({ ...base, outcome: 'ended' });
        continue;
      }
      await client.cancel(handle, signal);
      await ledger.markBatchCancelled(campaign, record.batchId, now().toISOString());
      batches.push({ ...base, outcome: 'cancelled' });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const lost = (err as { errorClass?: unknown }).errorClass === 'not_found';
      batches.push({ ...base, outcome: lost ? 'lost' : 'failed', message });
    }
  }
  return { batches, undetermined, missingClients: [...missing].sort() };
}

/**
 * The batch clients of a campaign's `mode: batch` entries (models under test and role entries),
 * keyed by client id, for `stopCampaign`. Reads the API keys as a run does.
 */
export async function batchClientsFor(campaign: Campaign, ctx: ProviderContext): Promise<Map<string, BatchClient>> {
  const entries: ModelEntry[] = campaignEntries(campaign);
  const clients = new Map<string, BatchClient>();
  for (const entry of entries) {
    if (entry.mode !== 'batch') continue;
    const client = await createBatchClient(entry, ctx);
    clients.set(client.id, client);
  }
  return clients;
}
