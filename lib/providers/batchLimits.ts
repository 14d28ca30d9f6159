/**
 * The documented size limits of each provider's batch API, by provider name: what the batch
 * clients split to, and what `sondage plan` reads to price a partition's remainder below a
 * provider's minimum at the synchronous price, without loading any SDK.
 */
import type { BatchLimits } from './batchTypes.js';

/** OpenAI's documented limits for one batch input file: 50,000 requests, 200 MB. */
export const OPENAI_BATCH_LIMITS: BatchLimits = { maxRequests: 50_000, maxBytes: 200 * 1024 * 1024 };

/** Anthropic's documented limits for one Message Batch: 100,000 requests or 256 MB. */
export const ANTHROPIC_BATCH_LIMITS: BatchLimits = { maxRequests: 100_000, maxBytes: 256 * 1024 * 1024 };

/**
 * The fewest records Bedrock accepts in one job (its "minimum number of records per batch
 * inference job" quota, 100 for the models that offer batch): a smaller job is refused at
 * validation, after the input was uploaded, so sondage refuses it before.
 */
export const BEDROCK_BATCH_MIN_RECORDS = 100;

/**
 * Bedrock's default quotas for one batch inference job: 50,000 records and 1 GB per input file
 * (adjustable per account and model in Service Quotas; these are the floors sondage splits to),
 * and at least BEDROCK_BATCH_MIN_RECORDS records.
 */
export const BEDROCK_BATCH_LIMITS: BatchLimits = { maxRequests: 50_000, maxBytes: 1_000_000_000, minRequests: BEDROCK_BATCH_MIN_RECORDS };

const BY_PROVIDER: Readonly<Record<string, BatchLimits>> = { openai: OPENAI_BATCH_LIMITS, anthropic: ANTHROPIC_BATCH_LIMITS, bedrock: BEDROCK_BATCH_LIMITS };

/** The batch limits of a provider by its name in the campaign file; undefined for one without a batch API. */
export function batchLimitsOf(provider: string): BatchLimits | undefined {
  return BY_PROVIDER[provider];
}
