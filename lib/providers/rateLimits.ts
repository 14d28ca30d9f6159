/**
 * What a provider said about its rate limits in a response's headers. Adapters report these
 * through the `onRateLimitHints` callback of their options (GenerateResult stays the shared
 * contract), and `lib/run/RateLimiter.ts` refines its buckets from them.
 */
export interface RateLimitHints {
  /** Requests allowed per minute (`x-ratelimit-limit-requests`). */
  readonly limitRequests?: number;
  /** Tokens allowed per minute (`x-ratelimit-limit-tokens`). */
  readonly limitTokens?: number;
  /** Requests the server would accept now. */
  readonly remainingRequests?: number;
  /** Tokens the server would accept now. */
  readonly remainingTokens?: number;
  /** Milliseconds until the request allowance is back to its limit. */
  readonly resetRequestsMs?: number;
  /** Milliseconds until the token allowance is back to its limit. */
  readonly resetTokensMs?: number;
}

/** Anything that answers `get(name)` the way `Headers` does, or a plain record. */
export type HeaderSource = { get(name: string): string | null } | Readonly<Record<string, string | string[] | undefined>>;

export function headerValue(headers: HeaderSource | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined;
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const v = (headers as Readonly<Record<string, string | string[] | undefined>>)[name];
  return Array.isArray(v) ? v[0] : v;
}

const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;

/**
 * Parses OpenAI's reset durations (`1s`, `6m0s`, `20ms`, `1h2m3.5s`) to milliseconds; a bare
 * number is read as seconds. Undefined when the text is not a duration.
 */
export function parseDurationMs(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  if (!/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(t)) return undefined;
  const unit = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;
  let total = 0;
  for (const [, n, u] of t.matchAll(DURATION_PART)) total += Number(n) * unit[u as keyof typeof unit];
  return total;
}

function count(headers: HeaderSource, name: string): number | undefined {
  const v = headerValue(headers, name);
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** A reset given as a duration (OpenAI) or an RFC 3339 instant (Anthropic), as ms from `now`. */
function resetMs(headers: HeaderSource, name: string, now: number): number | undefined {
  const v = headerValue(headers, name);
  if (v === undefined) return undefined;
  const d = parseDurationMs(v);
  if (d !== undefined) return d;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * Reads the rate-limit headers of a response: OpenAI's and most OpenAI-compatible servers'
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, and Anthropic's
 * `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`. Undefined when there are none.
 * @example parseRateLimitHeaders(new Headers({ 'x-ratelimit-remaining-requests': '59' }))?.remainingRequests === 59
 */
export function parseRateLimitHeaders(headers: HeaderSource | undefined, now: number = Date.now()): RateLimitHints | undefined {
  if (headers === undefined) return undefined;
  const pick = (openai: string, anthropic: string, read: (h: HeaderSource, n: string) => number | undefined) =>
    read(headers, openai) ?? read(headers, anthropic);
  const hints: RateLimitHints = {
    limitRequests: pick('x-ratelimit-limit-requests', 'anthropic-ratelimit-requests-limit', count),
    limitTokens: pick('x-ratelimit-limit-tokens', 'anthropic-ratelimit-tokens-limit', count),
    remainingRequests: pick('x-ratelimit-remaining-requests', 'anthropic-ratelimit-requests-remaining', count),
    remainingTokens: pick('x-ratelimit-remaining-tokens', 'anthropic-ratelimit-tokens-remaining', count),
    resetRequestsMs: pick('x-ratelimit-reset-requests', 'anthropic-ratelimit-requests-reset', (h, n) => resetMs(h, n, now)),
    resetTokensMs: pick('x-ratelimit-reset-tokens', 'anthropic-ratelimit-tokens-reset', (h, n) => resetMs(h, n, now)),
  };
  const defined = Object.entries(hints).filter(([, v]) => v !== undefined);
  return defined.length === 0 ? undefined : (Object.fromEntries(defined) as RateLimitHints);
}

/**
 * How long a 429 or 503 asks the client to wait: `retry-after-ms` (OpenAI), else `retry-after`
 * in seconds or as an HTTP date. Undefined when the response names no wait.
 */
export function retryAfterMs(headers: HeaderSource | undefined, now: number = Date.now()): number | undefined {
  const ms = headerValue(headers, 'retry-after-ms');
  if (ms !== undefined && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const after = headerValue(headers, 'retry-after');
  if (after === undefined || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(after);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}
