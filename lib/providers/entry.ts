/**
 * What building a provider takes: the campaign entry it answers for, and the campaign-wide
 * context. Apart from the registry so that the adapters it loads can name these types without
 * importing the registry that imports them.
 */
import type { RateLimitHints } from './rateLimits.js';
import type { SimulatorFactory } from './simulated/types.js';

/** What the registry needs from a campaign's model (or judge) entry. */
export interface ProviderEntry {
  /** Campaign model id. */
  readonly id: string;
  /** Provider name, e.g. `simulated`. */
  readonly provider: string;
  /** The provider's model name. */
  readonly model: string;
  /** The entry's `simulation:` block (simulated provider only). */
  readonly simulation?: unknown;
  /** `subject` for a model under test (the default), or the battery's role the entry plays (`judge`). */
  readonly role?: string;
  /** Where the entry sits in the campaign file (`judge.audit.second_judge`), named in its configuration errors. */
  readonly simulationPath?: string;
  /** Real providers: the API's base URL (required for `openai-compatible`). */
  readonly base_url?: string;
  /** Real providers: the environment variable holding the API key; never the key itself. */
  readonly api_key_env?: string;
  /** Bedrock: the AWS region of the model (AWS_REGION when absent). */
  readonly region?: string;
  /** Bedrock with `mode: batch`: where its jobs keep their JSONL files, and the service role Bedrock uses for them. */
  readonly bedrock_batch?: { readonly s3_uri: string; readonly role_arn: string };
  /** Seconds one attempt may take (`timeout_s`): the SDK's own timeout is set a little above it. */
  readonly timeout_s?: number | undefined;
}

export interface ProviderContext {
  /** Campaign seed. */
  readonly seed: number;
  /** Campaign file, named in configuration errors. */
  readonly file?: string;
  /** Where API keys are read; `process.env` when absent (tests pass their own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Receives the rate-limit headers of every real provider response, keyed by provider id
   * (`openai/gpt-4.1-mini`), for lib/run/RateLimiter.ts to refine its buckets.
   */
  readonly onRateLimitHints?: (providerId: string, hints: RateLimitHints) => void;
  /** Real providers: the SDK's own per-request timeout, a backstop behind callWithRetry's (default: above the entry's `timeout_s`). */
  readonly timeoutMs?: number;
  /** Simulated models: the campaign's battery builds them (lib/battery `Battery.simulator`). */
  readonly simulator?: SimulatorFactory;
}
