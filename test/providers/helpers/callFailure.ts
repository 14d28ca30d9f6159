/**
 * The error a provider call ends with, for the adapter tests that check how a failure is classified.
 */
import { expect } from 'vitest';
import { ProviderCallError } from '../../../lib/providers/errors.js';
import type { GenerateRequest, ModelProvider } from '../../../lib/providers/types.js';

/**
 * Calls `provider.generate(req)` and returns the ProviderCallError it rejects with; fails the test
 * when the call succeeds or rejects with anything else.
 * @example const err = await callFailure(provider, REQ); expect(err.errorClass).toBe('rate_limit');
 */
export async function callFailure(provider: ModelProvider, req: GenerateRequest, signal?: AbortSignal): Promise<ProviderCallError> {
  const err = await provider.generate(req, signal).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderCallError);
  return err as ProviderCallError;
}
