import type { RetryDecision } from '../types.js';
import { SimulatedRequestError, SimulatedTransientError } from '../errors.js';

/**
 * Retry decision for errors of the simulated providers: their transient errors are retryable,
 * everything else (a bad request, an abort, a programming error) is not.
 */
export function classifySimulatedError(err: unknown): RetryDecision {
  if (err instanceof SimulatedTransientError) return { retry: true, kind: 'transient', errorClass: 'simulated_transient' };
  if (err instanceof SimulatedRequestError) return { retry: false, errorClass: 'simulated_bad_request' };
  if (err instanceof Error && err.name === 'AbortError') return { retry: false, errorClass: 'aborted' };
  return { retry: false, errorClass: err instanceof Error ? err.name : 'unknown' };
}
