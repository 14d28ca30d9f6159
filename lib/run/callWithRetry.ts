import { callSignal } from './callSignal.js';
import { sleep } from './sleep.js';
import type { GenerateRequest, GenerateResult, ModelProvider } from '../providers/types.js';
import { isAdmitting } from './RateLimiter.js';

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 60_000, timeoutMs: 120_000 };

export type Attempt =
  | { readonly attempt: number; readonly ok: true; readonly result: GenerateResult; readonly latencyMs: number }
  | {
      readonly attempt: number;
      readonly ok: false;
      readonly errorClass: string;
      readonly message: string;
      readonly retryable: boolean;
      readonly latencyMs: number;
      /**
       * Sent, and no reply came: the attempt timed out or was aborted in flight. The provider may
       * have run it and billed it, so the caller counts it as possibly billed at its reservation.
       */
      readonly unanswered?: boolean;
    };


/**
 * Calls a provider until it answers, a permanent error occurs or attempts run out. Every attempt is
 * reported through `onAttempt` (a failed request is data: the caller stores it). Backoff is
 * exponential with full jitter and honours a provider's retry-after. Retries live here and nowhere
 * else (STYLE.md, after Inspect's Model._generate); adapters only classify errors. The per-attempt
 * timeout starts once a rate-limited provider has admitted the call: a request queued behind the
 * limit is not a slow request. A run aborted while the first attempt is still queued returns an
 * `aborted` attempt that was never sent (and is not reported). `mayRetry`, when given, is asked
 * before each retry; false ends the call with the failed attempt.
 */
export async function callWithRetry(
  provider: ModelProvider,
  req: GenerateRequest,
  policy: RetryPolicy,
  onAttempt: (a: Attempt) => void,
  signal?: AbortSignal,
  firstAttempt = 1,
  mayRetry?: (failed: Extract<Attempt, { ok: false }>) => Promise<boolean>,
): Promise<Attempt> {
  let last: Attempt | undefined;
  for (let attempt = firstAttempt; attempt < firstAttempt + policy.maxAttempts; attempt++) {
    if (signal?.aborted) break;
    if (isAdmitting(provider)) {
      try {
        await provider.admit(req, signal);
      } catch (err) {
        if (!signal?.aborted) throw err;
        return last ?? notSent(attempt, err);
      }
    }
    const started = performance.now();
    const call = callSignal(signal, policy.timeoutMs);
    let failed: Extract<Attempt, { ok: false }>;
    let retryAfterMs: number | undefined;
    try {
      const result = await provider.generate(req, call.signal);
      last = { attempt, ok: true, result, latencyMs: Math.round(performance.now() - started) };
      onAttempt(last);
      return last;
    } catch (err) {
      const decision = call.timedOut()
        ? { retry: true as const, kind: 'transient' as const, errorClass: 'timeout' }
        : provider.classifyError(err);
      retryAfterMs = decision.retry ? decision.retryAfterMs : undefined;
      failed = {
        attempt,
        ok: false,
        errorClass: decision.errorClass,
        message: err instanceof Error ? err.message : String(err),
        retryable: decision.retry,
        latencyMs: Math.round(performance.now() - started),
        ...(call.timedOut() || call.signal.aborted ? { unanswered: true } : {}),
      };
    } finally {
      call.dispose();
    }
    last = failed;
    onAttempt(failed);
    if (!failed.retryable || signal?.aborted) return failed;
    // The caller may refuse a retry: one after an unanswered attempt needs a reservation of its own.
    if (mayRetry && !(await mayRetry(failed))) return failed;
    await sleep(backoffMs(policy, attempt - firstAttempt + 1, retryAfterMs), signal);
  }
  return last ?? notSent(firstAttempt, signal?.reason);
}

/**
 * The wait before retry number `retry` (1 = the first retry): exponential backoff with full
 * jitter, never shorter than the provider's retry-after. Shared by calls and batch creation.
 */
export function backoffMs(policy: RetryPolicy, retry: number, retryAfterMs?: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.max(retryAfterMs ?? 0, Math.random() * cap);
}

function notSent(attempt: number, reason: unknown): Attempt {
  const message = `aborted before the request was sent: ${reason instanceof Error ? reason.message : String(reason)}`;
  return { attempt, ok: false, errorClass: 'aborted', message, retryable: true, latencyMs: 0 };
}
