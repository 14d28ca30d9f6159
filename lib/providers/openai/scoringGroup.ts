/**
 * One call made of several requests (vLLM's `prompt_logprobs` candidate scoring: the reply and one
 * scoring request per candidate, sent together): when one fails, the others that were answered
 * were run and billed all the same, and the call's error must say so, or the attempt would be
 * stored at $0 while the provider billed it.
 */
import { ProviderCallError } from '../errors.js';
import type { GenerateResult } from '../types.js';

type Usage = GenerateResult['usage'];

/** What a request of the group gave: a usage when it was answered. */
export interface GroupAnswer {
  readonly usage: Usage;
}

/**
 * The error of a group of requests of which at least one failed: the first failure (in the
 * group's order: the reply before the scoring requests), carrying as its usage what every answered
 * request of the group used (and what a failure reported it used, a refusal's), and possibly
 * billed when any failure was (a timeout, a 504, a connection cut after sending). A failure that is
 * no ProviderCallError (an abort, a bug) is thrown as it is: the run counts an aborted call at its
 * reservation already, and a bug is not data. Undefined when no request failed.
 */
export function groupFailure(settled: readonly PromiseSettledResult<GroupAnswer>[], provider: string): unknown {
  const failures = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => s.reason as unknown);
  const first = failures[0];
  if (first === undefined) return undefined;
  if (!(first instanceof ProviderCallError)) return first;
  const used: Usage[] = [];
  for (const s of settled) {
    if (s.status === 'fulfilled') used.push(s.value.usage);
    else if (s.reason instanceof ProviderCallError && s.reason.usage !== undefined) used.push(s.reason.usage);
  }
  const possiblyBilled = failures.some((f) => f instanceof ProviderCallError && f.possiblyBilled);
  if (used.length === 0) return possiblyBilled === first.possiblyBilled ? first : rebuilt(first, provider, first.message, undefined, possiblyBilled);
  const answered = settled.filter((s) => s.status === 'fulfilled').length;
  // Cached prompt tokens are billed at their lower price: kept, as the answered group's usage keeps them.
  const cached = used.filter((u) => u.cached_input_tokens !== undefined);
  const usage: Usage = {
    input_tokens: used.reduce((n, u) => n + u.input_tokens, 0),
    output_tokens: used.reduce((n, u) => n + u.output_tokens, 0),
    ...(cached.length > 0 ? { cached_input_tokens: cached.reduce((n, u) => n + u.cached_input_tokens!, 0) } : {}),
  };
  const message = `${first.message} (${answered} of the call's ${settled.length} requests were answered and are billed)`;
  return rebuilt(first, provider, message, usage, possiblyBilled);
}

function rebuilt(first: ProviderCallError, provider: string, message: string, usage: Usage | undefined, possiblyBilled: boolean): ProviderCallError {
  return new ProviderCallError(message, provider, first.errorClass, first.retryable, first.status, first.retryAfterMs, {
    cause: first,
    possiblyBilled,
    ...(usage ? { usage } : {}),
  });
}
