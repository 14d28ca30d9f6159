import { ProviderError, SondageError } from '../errors.js';

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
