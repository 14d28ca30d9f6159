import type { RetryDecision } from './types.js';
import { ProviderCallError } from './errors.js';
import type { ProviderErrorClass } from './errors.js';
import { retryAfterMs } from './rateLimits.js';
import type { HeaderSource } from './rateLimits.js';

/**
 * The error classes of a Stainless-generated SDK (`openai`, `@anthropic-ai/sdk`): both export the
 * same four, so one mapping serves every adapter.
 */
export interface SdkErrorClasses {
  readonly APIError: abstract new (...args: never[]) => Error;
  readonly APIConnectionError: abstract new (...args: never[]) => Error;
  readonly APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  readonly APIUserAbortError: abstract new (...args: never[]) => Error;
}

const REDACTED = '[redacted]';

/** Replaces every occurrence of the secrets in `text` (keys shorter than 4 characters are left alone: they match too much). */
export function redactSecret(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join(REDACTED);
  return out;
}

function redactDeep(value: unknown, secrets: readonly string[], seen: Set<unknown>): unknown {
  if (typeof value === 'string') return redactSecret(value, secrets);
  if (value === null || typeof value !== 'object' || seen.has(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets, seen));
  if (value instanceof Error) return scrubError(value, secrets, seen);
  if (value instanceof Headers) {
    const copy = new Headers();
    value.forEach((v, k) => copy.append(k, redactSecret(v, secrets)));
    return copy;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v, secrets, seen)]));
}

/**
 * Redacts the secrets from an error in place: every own property (message, stack, the parsed
 * response body the SDKs keep as `error`, `apiMessage`, response headers) and the cause chain.
 * SDK errors are kept as `cause` for debugging, and a server that echoes the Authorization header
 * into its error body must not carry the key into a stored reply.
 */
export function scrubError<E extends Error>(err: E, secrets: readonly string[], seen: Set<unknown> = new Set()): E {
  seen.add(err);
  for (const key of Object.getOwnPropertyNames(err)) {
    const desc = Object.getOwnPropertyDescriptor(err, key);
    if (desc === undefined || !('value' in desc)) continue;
    const value = redactDeep(desc.value, secrets, seen);
    if (value !== desc.value) Object.defineProperty(err, key, { ...desc, value, writable: true, configurable: true });
  }
  return err;
}

/** `error.code` of an OpenAI-style body, `error.type` of an Anthropic one. */
export function bodyCode(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const inner = (body as { error?: unknown }).error ?? body;
  if (inner === null || typeof inner !== 'object') return undefined;
  const { code, type } = inner as { code?: unknown; type?: unknown };
  return typeof code === 'string' ? code : typeof type === 'string' ? type : undefined;
}

const CONTENT_FILTER_CODES = new Set(['content_filter', 'content_policy_violation', 'invalid_prompt']);

/** HTTP status → error class and whether a retry can help (the statuses the SDKs themselves retry: 408, 409, 429, 5xx). */
export function classifyStatus(status: number, code: string | undefined): { errorClass: ProviderErrorClass; retryable: boolean } {
  if (status === 429) return { errorClass: 'rate_limit', retryable: true };
  if (status === 408) return { errorClass: 'timeout', retryable: true };
  if (status === 409) return { errorClass: 'conflict', retryable: true };
  if (status >= 500) return { errorClass: 'server_error', retryable: true };
  if (code !== undefined && CONTENT_FILTER_CODES.has(code)) return { errorClass: 'content_filter', retryable: false };
  if (status === 400 || status === 413 || status === 422) return { errorClass: 'bad_request', retryable: false };
  if (status === 401) return { errorClass: 'auth', retryable: false };
  if (status === 402) return { errorClass: 'payment_required', retryable: false };
  if (status === 403) return { errorClass: 'permission', retryable: false };
  if (status === 404) return { errorClass: 'not_found', retryable: false };
  return { errorClass: 'http_error', retryable: false };
}

/**
 * Whether an HTTP error status means the request may have been run, and billed, upstream: any 5xx
 * may come from a gateway or proxy (a 504 above all) after the request went through, and nothing in
 * the answer tells which. When in doubt an attempt counts possibly billed: the budget cap must be a
 * bound, so over-counting is safe and under-counting is not. The one 5xx left out is Anthropic's
 * own 529 `overloaded_error`, which turns the request away before running it. A 4xx is the
 * provider's own refusal (a 408 is classed `timeout`, which counts anyway).
 */
export function statusPossiblyBilled(status: number, code: string | undefined): boolean {
  if (status === 529 && code === 'overloaded_error') return false;
  return status >= 500;
}

/**
 * Socket and resolver codes of a request that never left this machine: nothing listens, no such
 * host, no route, the connection (TCP or TLS, before any byte of the request) was never made.
 * Every other code, ECONNRESET, EPIPE, UND_ERR_SOCKET ("other side closed") and ETIMEDOUT among
 * them, may come after the request was written, so it counts possibly billed: when in doubt, the
 * cap must stay a bound.
 */
const NEVER_DELIVERED_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** A TLS failure: the handshake comes before the request, so nothing was sent. */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_)|CERT|^DEPTH_ZERO_SELF_SIGNED|^UNABLE_TO_(GET|VERIFY)_/;

/** True when `code` (a socket, resolver or TLS code) shows that the request never left. */
export function neverDelivered(code: string | undefined): boolean {
  return code !== undefined && (NEVER_DELIVERED_CODES.has(code) || TLS_CODE.test(code));
}

export interface SdkErrorContext {
  /** Provider id for messages, e.g. `openai/gpt-4.1-mini`. */
  readonly provider: string;
  /** The base URL without credentials (endpointOf), named when a connection fails. */
  readonly endpoint?: string;
  readonly sdk: SdkErrorClasses;
  /** The API key (and anything else secret) to redact. */
  readonly secrets: readonly string[];
  readonly now?: () => number;
}

/**
 * The error context of an adapter over a vendor SDK, the same for every call it makes: the
 * endpoint its options name (`defaultBaseURL`, the vendor's API, when they name none), and as
 * secrets the key and any credentials written into the URL.
 */
export function sdkErrorContext(
  provider: string,
  sdk: SdkErrorClasses,
  options: { readonly apiKey: string; readonly baseURL?: string },
  defaultBaseURL: string,
): SdkErrorContext & { readonly endpoint: string } {
  return { provider, endpoint: endpointOf(options.baseURL ?? defaultBaseURL), sdk, secrets: [options.apiKey, ...urlSecrets(options.baseURL)] };
}

/**
 * Turns whatever an SDK call threw into a classified ProviderCallError, with the secrets redacted
 * from the message and from the SDK error kept as `cause`. A ProviderCallError passes through.
 */
export function toProviderCallError(err: unknown, ctx: SdkErrorContext): ProviderCallError {
  if (err instanceof ProviderCallError) return err;
  const { provider, sdk, secrets } = ctx;
  const cause = err instanceof Error ? scrubError(err, secrets) : undefined;
  const detail = redactSecret(redactUrlCredentials(err instanceof Error ? err.message : String(err)), secrets).slice(0, 300);
  const make = (errorClass: ProviderErrorClass, retryable: boolean, text: string, status?: number, wait?: number, possiblyBilled?: boolean) =>
    new ProviderCallError(`${provider}: ${text}`, provider, errorClass, retryable, status, wait, { cause, ...(possiblyBilled !== undefined ? { possiblyBilled } : {}) });
  // Order matters: the timeout and abort errors are subclasses of the connection / API error.
  if (err instanceof sdk.APIUserAbortError) return make('aborted', false, 'request aborted by the caller');
  if (err instanceof sdk.APIConnectionTimeoutError) return make('timeout', true, `request to ${ctx.endpoint ?? 'the provider'} timed out (${detail})`);
  if (err instanceof sdk.APIConnectionError) {
    const why = connectionCause(err, secrets);
    const to = ctx.endpoint ?? 'the provider';
    // fetch refuses some URLs before any connection: no retry can change that (a URL with a user
    // name or password was retried for minutes as a "connection error").
    if (why.permanent) return make('bad_request', false, `cannot send to ${to}: ${why.text}`, undefined, undefined, false);
    // A connection reset or closed once the request was out may leave it run and billed.
    return make('connection', true, `connection to ${to} failed (${why.text}); retry the call`, undefined, undefined, !neverDelivered(why.code));
  }
  if (err instanceof sdk.APIError) {
    const { status, headers, error } = err as Error & { status?: number; headers?: HeaderSource; error?: unknown };
    if (typeof status === 'number') {
      const code = bodyCode(error);
      const { errorClass, retryable } = classifyStatus(status, code);
      const wait = retryable ? retryAfterMs(headers, ctx.now?.() ?? Date.now()) : undefined;
      return make(errorClass, retryable, `HTTP ${status} ${errorClass}: ${detail}`, status, wait, errorClass === 'timeout' || statusPossiblyBilled(status, code));
    }
  }
  if (err instanceof Error && err.name === 'AbortError') return make('aborted', false, 'request aborted by the caller');
  // Anything else (a programming error in the adapter) is not worth retrying. Whether the request
  // left is unknown: counted possibly billed, as every doubt is.
  return make('http_error', false, `unexpected error: ${detail}`, undefined, undefined, true);
}

/** `http://user:pass@host/…` → `http://[redacted]@host/…`: credentials in a URL never reach a message. */
export function redactUrlCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, `$1${REDACTED}@`);
}

/** The user name and password of a URL, raw and decoded, to redact wherever they might appear. */
export function urlSecrets(baseURL: string | undefined): string[] {
  if (baseURL === undefined) return [];
  try {
    const u = new URL(baseURL);
    return [...new Set([u.password, u.username, decodeURIComponent(u.password), decodeURIComponent(u.username)])].filter((s) => s !== '');
  } catch {
    return [];
  }
}

/**
 * A base URL as messages name it: without user name, password, query or fragment, and without a
 * trailing slash. An unparsable one (the campaign parser refuses those) comes back redacted.
 * @example endpointOf('https://user:pw@example.com/v1/?k=1') // 'https://example.com/v1'
 */
export function endpointOf(baseURL: string): string {
  try {
    const u = new URL(baseURL);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return redactUrlCredentials(baseURL);
  }
}

/** Why fetch could not reach the server: undici's code (ECONNREFUSED, ENOTFOUND, …) or its reason. */
function connectionCause(err: Error, secrets: readonly string[]): { text: string; permanent: boolean; code?: string } {
  const causes: unknown[] = [];
  for (let c: unknown = err.cause, i = 0; c !== undefined && c !== null && i < 5; c = (c as { cause?: unknown }).cause, i++) causes.push(c);
  const code = causes.map((c) => (c as { code?: unknown }).code).find((c): c is string => typeof c === 'string');
  const message = causes.map((c) => (c instanceof Error ? c.message : '')).find((m) => m !== '' && m !== 'fetch failed') ?? err.message;
  if (/URL that includes credentials/i.test(message)) {
    return { text: 'its URL holds a user name or password, which fetch refuses to send; remove them from base_url (the key goes in api_key_env)', permanent: true };
  }
  if (message === 'bad port') return { text: 'fetch refuses this port (a port browsers block); serve the API on another port', permanent: true };
  const words: Record<string, string> = {
    ECONNREFUSED: 'nothing listens there',
    ENOTFOUND: 'no such host',
    EAI_AGAIN: 'the host name could not be resolved now',
    ECONNRESET: 'the connection was reset',
    ETIMEDOUT: 'the connection timed out',
    EHOSTUNREACH: 'the host cannot be reached',
    UND_ERR_SOCKET: 'the server closed the connection',
    UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  };
  if (code !== undefined) return { text: `${words[code] ?? (TLS_CODE.test(code) ? 'the TLS handshake failed' : 'network error')}, ${code}`, permanent: false, code };
  return { text: redactSecret(redactUrlCredentials(message), secrets).slice(0, 200), permanent: false };
}

/**
 * The retry decision for an error an adapter threw. `callWithRetry` (lib/run) owns the retries;
 * this only says whether one can help and how long the provider asked to wait.
 */
export function classifyProviderError(err: unknown): RetryDecision {
  if (err instanceof ProviderCallError) {
    const billed = { ...(err.possiblyBilled ? ({ possiblyBilled: true } as const) : {}), ...(err.usage ? { usage: err.usage } : {}) };
    if (!err.retryable) return { retry: false, errorClass: err.errorClass, ...billed };
    const kind = err.errorClass === 'rate_limit' ? 'rate_limit' : 'transient';
    return err.retryAfterMs === undefined
      ? { retry: true, kind, errorClass: err.errorClass, ...billed }
      : { retry: true, kind, retryAfterMs: err.retryAfterMs, errorClass: err.errorClass, ...billed };
  }
  if (err instanceof Error && err.name === 'AbortError') return { retry: false, errorClass: 'aborted' };
  return { retry: false, errorClass: err instanceof Error ? err.name : 'unknown' };
}
