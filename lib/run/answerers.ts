/**
 * The providers that answer a campaign's phases, created once per run (and once per partition
 * thread): the same entries, checks and rate limiters wherever the partitions run.
 */
import { CampaignFileError, formatIssues } from '../errors.js';
import { createBatchClient, createProvider } from '../providers/registry.js';
import type { BatchClient } from '../providers/batchTypes.js';
import type { ModelProvider } from '../providers/types.js';
import { answeringEntries } from './context.js';
import type { RunContext } from './context.js';
import { rateLimited } from './partitionSpec.js';
import type { RateLimiters } from './RateLimiter.js';

export interface Answerers {
  /** Entry id → its provider, behind the limiter of its provider model (none for simulated ones). */
  readonly providers: ReadonlyMap<string, ModelProvider>;
  /** Entry id → its batch client, for entries with `mode: batch`. */
  readonly batchClients: ReadonlyMap<string, BatchClient>;
}

/**
 * Providers check their settings (a simulation block, an unknown provider) when created: before
 * anything is written, a campaign that cannot run leaves no data folder behind. Real providers
 * share one limiter per provider model (RPM/TPM from the campaign, lowered by the x-ratelimit
 * headers they report); the simulated one needs none.
 */
export async function createAnswerers(ctx: RunContext, limiters: RateLimiters): Promise<Answerers> {
  const { campaign, battery } = ctx;
  const providerCtx = { seed: campaign.seed, file: campaign.file, onRateLimitHints: limiters.observe, ...(battery.simulator ? { simulator: battery.simulator } : {}) };
  const providers = new Map<string, ModelProvider>();
  const batchClients = new Map<string, BatchClient>();
  for (const { entry, role, path } of answeringEntries(ctx)) {
    if (entry.runs_on === 'gpu' && entry.provider === 'openai-compatible' && entry.base_url === undefined) {
      // On AWS its GPU job serves it; here it needs a server of its own.
      const issue = {
        file: campaign.file,
        path: `${path ?? `models[${campaign.models.indexOf(entry)}]`}.base_url`,
        message: `${entry.id} runs_on: gpu and has no base_url: \`sondage start --aws\` runs it on AWS Batch; to run it here, serve it with vLLM and give base_url (e.g. http://localhost:8000/v1)`,
      };
      throw new CampaignFileError(formatIssues([issue]), [issue]);
    }
    providers.set(entry.id, rateLimited(limiters, await createProvider({ ...entry, role, simulationPath: path }, providerCtx), entry));
    // mode: batch goes through the provider's batch API at its discounted price.
    if (entry.mode === 'batch') batchClients.set(entry.id, await createBatchClient(entry, providerCtx));
  }
  return { providers, batchClients };
}
