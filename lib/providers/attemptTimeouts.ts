/**
 * How long one attempt of a call may take, and the timeouts behind it.
 *
 * The attempt timeout (`models[].timeout_s`) is the run's own: lib/run/callWithRetry.ts aborts an
 * attempt when it passes and records it as sent and unanswered, so that its reservation is counted
 * as possibly billed. Two timeouts sit behind it and must never end an attempt first: the SDK's
 * request timeout (the OpenAI and Anthropic SDKs default to 600 s) and the HTTP transport's (Node's
 * fetch waits 300 s for response headers; transportTimeouts.ts). Both follow the attempt timeout,
 * a little above it.
 */

/**
 * The attempt timeout of a model that sets no `timeout_s`: 660 s, a tenth above the OpenAI and
 * Anthropic SDKs' own 600 s. A reply that the SDK on its own would have waited for (a reasoning
 * model thinking for minutes, thousands of `max_tokens`) is waited for here too, instead of being
 * cut off, possibly billed, and asked again up to 6 times; the SDK's timeout, above ours, is a
 * backstop that never fires first.
 */
export const DEFAULT_ATTEMPT_TIMEOUT_S = 660;

/**
 * The longest `timeout_s` a campaign may set: one hour. Locally and in a GPU job an attempt may
 * wait that long (a long prefill on a slow server); on Lambda the worker's deadline ends an attempt
 * first (docs/budget.md).
 */
export const MAX_ATTEMPT_TIMEOUT_S = 3600;

/** The attempt timeout in ms of a model entry's `timeout_s`, the default when absent. */
export function attemptTimeoutMs(timeoutS: number | undefined): number {
  return Math.round((timeoutS ?? DEFAULT_ATTEMPT_TIMEOUT_S) * 1000);
}

/**
 * The SDK's request timeout behind an attempt timeout: a tenth above it, at least 1 s and at most
 * 30 s more, so that the run's own timer, which records the attempt as possibly billed, fires first.
 *
 * @example sdkTimeoutMs(660_000) // 690_000
 */
export function sdkTimeoutMs(attemptMs: number): number {
  return attemptMs + Math.min(30_000, Math.max(1_000, Math.round(attemptMs / 10)));
}
