import type { ChatMessage, GenerationSettings, PromptItem } from '../core/types.js';
import type { RateLimitHints } from './rateLimits.js';

export interface GenerateRequest {
  readonly messages: readonly ChatMessage[];
  readonly settings: GenerationSettings;
  /**
   * The item behind the request. Real adapters ignore it; the simulated provider reads its
   * factors and reading map, which is what makes it a simulator.
   */
  readonly item?: PromptItem;
}

export interface TokenLogprob {
  readonly logprob: number;
  /** false when the value is only bounded by the top-k (the token fell outside it). */
  readonly exact: boolean;
}

export interface GenerateResult {
  readonly text: string;
  readonly finish_reason: string;
  /**
   * `cached_input_tokens`: the part of `input_tokens` served from the provider's prompt cache
   * (OpenAI `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`), priced at
   * the cached-input price where the price table has one; absent when the provider says nothing.
   */
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number; readonly cached_input_tokens?: number };
  readonly logprobs?: Readonly<Record<string, TokenLogprob>>;
  /** The settings actually sent to the model (Same Judgment, Different Yes "Generation settings"). */
  readonly settings_sent?: Readonly<Record<string, unknown>>;
}

export type RetryDecision = (
  | { readonly retry: false; readonly errorClass: string }
  | { readonly retry: true; readonly kind: 'rate_limit' | 'transient'; readonly retryAfterMs?: number; readonly errorClass: string }
) & {
  /**
   * The request was delivered, or may have been, and got no usable answer (a gateway's 5xx, a
   * connection closed after sending, a body cut short): the provider may have billed it, and the
   * run counts it possibly billed at its reservation, as a timed-out attempt. Absent: nothing was
   * delivered, or the provider answered with a refusal of its own (429, 4xx).
   */
  readonly possiblyBilled?: true;
  /** The usage the provider reported for an answer that is not a reply (a refusal, a filtered reply): the attempt is priced by it. */
  readonly usage?: GenerateResult['usage'];
};

export interface ModelProvider {
  /** e.g. `simulated/alpha`, `openai-compatible/qwen3-8b`. */
  readonly id: string;
  /** True for the simulated provider; every report labels its replies "simulated". */
  readonly simulated: boolean;
  /**
   * Where the calls go, as messages name it: the base URL without credentials, query or fragment
   * (`https://api.openai.com/v1`). Absent for the simulated provider. A rejected API key stops
   * the calls of this endpoint only (provider model, endpoint and key variable).
   */
  readonly endpoint?: string;
  generate(req: GenerateRequest, signal?: AbortSignal): Promise<GenerateResult>;
  classifyError(err: unknown): RetryDecision;
}

/** USD per million tokens. */
export interface Price {
  readonly input_per_mtok: number;
  readonly output_per_mtok: number;
  /** Fraction of the price paid through the provider's batch API (0.5 for most). */
  readonly batch_discount?: number;
  /**
   * USD per request on top of the token prices: the GPU time one prompt of a phase takes on a
   * runs_on: gpu model (lib/gpu/gpuPrice.ts). Never set from a campaign file.
   */
  readonly per_request_usd?: number;
}

/**
 * What an adapter over a vendor's official SDK takes: the model, the key, where to reach it, and
 * the hooks the run passes in (lib/providers/connectionOptions.ts fills them). An adapter extends
 * it with what only its vendor has.
 */
export interface SdkProviderOptions {
  /** The provider's model name. */
  readonly model: string;
  readonly apiKey: string;
  /** The API's base URL; the SDK's default (the vendor's API) when absent. */
  readonly baseURL?: string;
  /**
   * The SDK's own per-request timeout, a backstop: `callWithRetry` aborts through the signal
   * first. connectionOptions sets it above the model's attempt timeout; absent, above the default one.
   */
  readonly timeoutMs?: number;
  /** Called with the rate-limit headers of every response, 429s included. */
  readonly onRateLimitHints?: (hints: RateLimitHints) => void;
  /** For tests and proxies; the global fetch otherwise. */
  readonly fetch?: typeof fetch;
}
