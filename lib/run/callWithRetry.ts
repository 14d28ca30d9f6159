import { attemptTimeoutMs } from '../providers/attemptTimeouts.js';
import { callSignal } from './callSignal.js';
import { sleep } from './sleep.js';
import type { GenerateRequest, GenerateResult, ModelProvider } from '../providers/types.js';
import { isAdmitting } from './RateLimiter.js';
import type { CallWatch } from './CallWatch.js';

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly timeoutMs: number;
  /**
   * The longest wait a provider may ask for (Retry-After) that a call sits out before its retry.
   * A longer one ends the call with `waitTooLongMs` set, so that the caller stops the model's calls
   * and says when to resume, instead of sleeping a day under an unchanging bar. Absent: any wait.
   */
  readonly maxWaitMs?: number;
}

/** What a caller may watch and stop of one call besides the run's signal (see callWithRetry). */
export interface CallHooks {
  readonly watch?: CallWatch | undefined;
  /** Aborts the call's waits (rate-limit turn, backoff), not a request in flight. Defaults to the run's signal. */
  readonly waitSignal?: AbortSignal | undefined;
  /**
   * Asked right before each attempt is sent, after its waits (a turn behind the rate limit, a
   * backoff): false sends nothing more (the Lambda worker: the attempt could not end before the
   * deadline aborts it). The call then ends with its last attempt, or, when none was sent, with a
   * `notStarted` one.
   */
  readonly mayStart?: (() => boolean) | undefined;
}

/** The local run's ceiling on a provider's Retry-After (`sondage run --max-wait`): five minutes. */
export const DEFAULT_MAX_WAIT_MS = 300_000;

/** The run's retry policy; an attempt's timeout is the model's `timeout_s`, else DEFAULT_ATTEMPT_TIMEOUT_S (660 s, above the SDKs' own). */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 60_000, timeoutMs: attemptTimeoutMs(undefined) };

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
       * Sent, and no usable reply came: the attempt timed out or was aborted in flight, or the
       * adapter says it was (or may have been) delivered and not usably answered (a gateway's 5xx,
       * a connection closed after sending, a body cut short: RetryDecision `possiblyBilled`). The
       * provider may have run it and billed it, so the caller counts it as possibly billed at its
       * reservation. When in doubt an attempt is counted: the cap must be a bound.
       */
      readonly unanswered?: boolean;
      /** What the provider reported it used for an answer that is not a reply (a refusal, a filtered reply): the row is priced by it. */
      readonly usage?: GenerateResult['usage'];
      /** The provider asked to wait this long before a retry, more than the policy's `maxWaitMs`: no retry was made. */
      readonly waitTooLongMs?: number;
      /** Nothing was sent: `hooks.mayStart` refused the first attempt (its item is untouched). */
      readonly notStarted?: boolean;
    };


/**
 * Calls a provider until it answers, a permanent error occurs or attempts run out. Every attempt is
 * reported through `onAttempt` (a failed request is data: the caller stores it). Backoff is
 * exponential with full jitter and honours a provider's retry-after. Retries live here and nowhere
 * else (STYLE.md, after Inspect's Model._generate); adapters only classify errors. The per-attempt
 * timeout starts once a rate-limited provider has admitted the call: a request queued behind the
 * limit is not a slow request. A run aborted while the first attempt is still queued returns an
 * `aborted` attempt that was never sent (and is not reported). `mayRetry`, when given, is asked
 * before each retry; false ends the call with the failed attempt. `hooks.watch` sees each request
 * in flight and each wait before a retry (the progress line shows them); `hooks.waitSignal` ends
 * the waits without cutting short a request already sent.
 */
export async function callWithRetry(
  provider: ModelProvider,
  req: GenerateRequest,
  policy: RetryPolicy,
  onAttempt: (a: Attempt) => void,
  signal?: AbortSignal,
  firstAttempt = 1,
  mayRetry?: (failed: Extract<Attempt, { ok: false }>) => Promise<boolean>,
  hooks: CallHooks = {},
): Promise<Attempt> {
  const { watch } = hooks;
  // Waits (a turn behind the rate limit, a backoff) end with either signal; a call on the wire only with the run's.
  const waitSignal = hooks.waitSignal ?? signal;
  let last: Attempt | undefined;
  for (let attempt = firstAttempt; attempt < firstAttempt + policy.maxAttempts; attempt++) {
    if (waitSignal?.aborted) break;
    if (isAdmitting(provider)) {
      try {
        await provider.admit(req, waitSignal);
      } catch (err) {
        if (!waitSignal?.aborted) throw err;
        return last ?? notSent(attempt, err);
      }
    }
    if (hooks.mayStart?.() === false) return last ?? { ...notSent(attempt, 'too near the deadline to start'), notStarted: true };
    const started = performance.now();
    const call = callSignal(signal, policy.timeoutMs);
    let failed: Extract<Attempt, { ok: false }>;
    let retryAfterMs: number | undefined;
    const settled = watch?.sent();
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
        // A timeout from below (the SDK's, or Node's fetch waiting 300 s for headers) is a request sent
        // and never answered as much as ours: possibly billed too, whichever timer fired first. So is
        // one the adapter saw delivered and not usably answered (a 504, a connection reset after sending).
        ...(call.timedOut() || call.signal.aborted || decision.errorClass === 'timeout' || decision.possiblyBilled === true ? { unanswered: true } : {}),
        ...(decision.usage ? { usage: decision.usage } : {}),
      };
    } finally {
      settled?.();
      call.dispose();
    }
    last = failed;
    onAttempt(failed);
    if (!failed.retryable || signal?.aborted) return failed;
    if (policy.maxWaitMs !== undefined && retryAfterMs !== undefined && retryAfterMs > policy.maxWaitMs) return { ...failed, waitTooLongMs: retryAfterMs };
    // The caller may refuse a retry: one after an unanswered attempt needs a reservation of its own.
    if (mayRetry && !(await mayRetry(failed))) return failed;
    const wait = backoffMs(policy, attempt - firstAttempt + 1, retryAfterMs);
    const woke = watch?.waiting(wait);
    await sleep(wait, waitSignal);
    woke?.();
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

function notSent(attempt: number, reason: unknown): Extract<Attempt, { ok: false }> {
  const message = `aborted before the request was sent: ${reason instanceof Error ? reason.message : String(reason)}`;
  return { attempt, ok: false, errorClass: 'aborted', message, retryable: true, latencyMs: 0 };
}
