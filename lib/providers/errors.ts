import { ProviderError, SondageError } from '../errors.js';
import type { GenerateResult } from './types.js';

/**
 * A call the simulated provider failed on purpose (`error_rate`), standing in for a 5xx or a
 * dropped connection so that retries can be tested without a network. Retryable.
 */
export class SimulatedTransientError extends ProviderError {
  constructor(provider: string, itemId: string, attempt: number) {
    super(`${provider}: simulated transient error on item ${itemId} (attempt ${attempt + 1}); retry the call`, provider, 503);
    this.name = 'SimulatedTransientError';
  }
}

/** A request the simulated provider cannot answer (no item, or an item without the map it needs). Not retryable. */
export class SimulatedRequestError extends ProviderError {
  constructor(message: string, provider: string) {
    super(message, provider, 400);
    this.name = 'SimulatedRequestError';
  }
}

/** A campaign names a provider the registry does not know. */
export class UnknownProviderError extends SondageError {
  constructor(
    message: string,
    public readonly provider: string,
    public readonly known: readonly string[],
  ) {
    super(message);
    this.name = 'UnknownProviderError';
  }
}

/**
 * Why a real provider call failed, as stored in a reply's `error_class`: the analysis counts
 * refusals and content filters apart from failures.
 */
export type ProviderErrorClass =
  | 'rate_limit'
  | 'server_error'
  | 'timeout'
  | 'connection'
  | 'conflict'
  | 'bad_request'
  | 'auth'
  | 'payment_required'
  | 'permission'
  | 'not_found'
  | 'content_filter'
  | 'refusal'
  | 'malformed_response'
  | 'aborted'
  | 'http_error';

/**
 * Classes of a request that reached the provider and got no usable answer, whoever threw them: a
 * timeout (sent, never answered) and a body that did not parse or lacked the fields read (the
 * provider answered, and billed, but nothing of it could be read).
 */
const DELIVERED_CLASSES: ReadonlySet<ProviderErrorClass> = new Set(['timeout', 'malformed_response']);

/**
 * A failed call to a real provider, already classified by its adapter: `errorClass`, whether a
 * retry can help and, for 429 and 503, how long the provider asked to wait. The message never
 * holds the API key (adapters redact it, and the SDK error kept as `cause`, before throwing).
 *
 * `possiblyBilled`: the request was delivered (or may have been) and no usable answer came, so the
 * provider may have run it and billed it; the run counts the attempt at its reservation against
 * the cap (callWithRetry's `unanswered`). True by default for a timeout or a malformed answer; the
 * adapters' error mappings (sdkErrors.ts, bedrockErrors.ts) say it for the other classes.
 */
export class ProviderCallError extends ProviderError {
  readonly possiblyBilled: boolean;
  /**
   * What the provider reported it used for an answer that is not a reply (a refusal, a reply its
   * filter withheld): billed like any answer, so the attempt's stored row is priced by it.
   */
  readonly usage: GenerateResult['usage'] | undefined;

  constructor(
    message: string,
    provider: string,
    public readonly errorClass: ProviderErrorClass,
    public readonly retryable: boolean,
    status?: number,
    public readonly retryAfterMs?: number,
    options?: ErrorOptions & { readonly possiblyBilled?: boolean; readonly usage?: GenerateResult['usage'] },
  ) {
    super(message, provider, status, options);
    this.name = 'ProviderCallError';
    this.usage = options?.usage;
    // An answer whose usage came with it (a refusal, a filtered reply) is priced by that usage, not possibly billed.
    this.possiblyBilled = options?.possiblyBilled ?? (this.usage === undefined && DELIVERED_CLASSES.has(errorClass));
  }
}
