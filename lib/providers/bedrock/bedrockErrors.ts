/**
 * What an AWS SDK call to Bedrock (or to S3 for batch inference) threw, as a classified
 * ProviderCallError. AWS errors carry their type as `name` (from the `x-amzn-errortype` header),
 * the HTTP status in `$metadata`, and `$fault` client | server; network failures come from the
 * Node HTTP handler with the socket's code.
 */
import { ProviderCallError } from '../errors.js';
import type { ProviderErrorClass } from '../errors.js';
import { classifyStatus, neverDelivered, redactSecret, scrubError, statusPossiblyBilled } from '../sdkErrors.js';

/**
 * Bedrock's error types → class and whether a retry can help. ModelNotReadyException is a model
 * still loading (the SDK's own retry policy retries it); ServiceQuotaExceededException a quota
 * that a later attempt may fit in; ModelErrorException a failure inside the model.
 */
const TYPES: Readonly<Record<string, { errorClass: ProviderErrorClass; retryable: boolean }>> = {
  ThrottlingException: { errorClass: 'rate_limit', retryable: true },
  ServiceQuotaExceededException: { errorClass: 'rate_limit', retryable: true },
  ModelNotReadyException: { errorClass: 'server_error', retryable: true },
  ServiceUnavailableException: { errorClass: 'server_error', retryable: true },
  InternalServerException: { errorClass: 'server_error', retryable: true },
  ModelErrorException: { errorClass: 'server_error', retryable: true },
  ModelTimeoutException: { errorClass: 'timeout', retryable: true },
  SlowDown: { errorClass: 'rate_limit', retryable: true },
  ValidationException: { errorClass: 'bad_request', retryable: false },
  ConflictException: { errorClass: 'conflict', retryable: false },
  AccessDeniedException: { errorClass: 'permission', retryable: false },
  AccessDenied: { errorClass: 'permission', retryable: false },
  ResourceNotFoundException: { errorClass: 'not_found', retryable: false },
  NoSuchBucket: { errorClass: 'not_found', retryable: false },
  NoSuchKey: { errorClass: 'not_found', retryable: false },
  // Credentials the service refused: the campaign's calls stop, as for a rejected API key.
  UnrecognizedClientException: { errorClass: 'auth', retryable: false },
  InvalidSignatureException: { errorClass: 'auth', retryable: false },
  SignatureDoesNotMatch: { errorClass: 'auth', retryable: false },
  InvalidAccessKeyId: { errorClass: 'auth', retryable: false },
  ExpiredTokenException: { errorClass: 'auth', retryable: false },
  ExpiredToken: { errorClass: 'auth', retryable: false },
  // The SDK's default chain found no credentials at all.
  CredentialsProviderError: { errorClass: 'auth', retryable: false },
};

/** Socket codes of a request that never got an answer: worth another attempt. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET']);

/**
 * The socket code of a request that got no answer, from the error or its causes: the HTTP/2
 * handler reports a refused connection as a cancelled stream caused by ECONNREFUSED.
 */
function networkCode(err: unknown): string | undefined {
  for (let c: unknown = err, i = 0; c !== null && typeof c === 'object' && i < 5; c = (c as { cause?: unknown }).cause, i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || code.startsWith('ERR_HTTP2_'))) return code === 'ERR_HTTP2_STREAM_CANCEL' ? (networkCode((c as { cause?: unknown }).cause) ?? code) : code;
  }
  return undefined;
}

export interface BedrockErrorContext {
  readonly provider: string;
  /** Where the calls go, named when a connection fails. */
  readonly endpoint: string;
  /** Anything to redact (static test credentials; the default chain's are never seen here). */
  readonly secrets: readonly string[];
}

/**
 * Turns whatever an AWS SDK call threw into a classified, secret-free ProviderCallError, keeping
 * the SDK error as `cause`. A ProviderCallError passes through.
 */
export function toBedrockCallError(err: unknown, ctx: BedrockErrorContext): ProviderCallError {
  if (err instanceof ProviderCallError) return err;
  const { provider, secrets } = ctx;
  const cause = err instanceof Error ? scrubError(err, secrets) : undefined;
  const e = (err ?? {}) as { name?: unknown; message?: unknown; code?: unknown; $metadata?: { httpStatusCode?: unknown }; $fault?: unknown };
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const detail = redactSecret(typeof e.message === 'string' ? e.message : String(err), secrets).slice(0, 300);
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined;
  // Delivered and not usably answered, so possibly billed: a 5xx or a fault AWS calls the server's
  // (a gateway's 504 as much as the service's own), or a model that ran and failed. When in doubt
  // an attempt is counted: the cap must be a bound.
  const serverSide = (status !== undefined && statusPossiblyBilled(status, undefined)) || e.$fault === 'server' || name === 'ModelErrorException';
  const make = (errorClass: ProviderErrorClass, retryable: boolean, text: string, possiblyBilled?: boolean) =>
    new ProviderCallError(`${provider}: ${text}`, provider, errorClass, retryable, status, undefined, { cause, ...(possiblyBilled !== undefined ? { possiblyBilled } : {}) });
  if (name === 'AbortError') return make('aborted', false, 'request aborted by the caller');
  if (name === 'TimeoutError' || e.code === 'ETIMEDOUT' && status === undefined) return make('timeout', true, `request to ${ctx.endpoint} timed out (${detail})`);
  const known = TYPES[name];
  if (known) return make(known.errorClass, known.retryable, `${name}${status !== undefined ? ` (HTTP ${status})` : ''}: ${detail}`, known.errorClass === 'timeout' || serverSide);
  // The SDK could not parse a body it was given (a proxy that cut the answer short); an error
  // status with a body that is not AWS's JSON (a gateway's HTML page) is classed by its status below.
  if (name === 'SyntaxError' && !(status !== undefined && status >= 400)) return make('malformed_response', true, `the answer did not parse (${detail.split('\n')[0]})`);
  const code = networkCode(err);
  // A reset or a closed stream may come after the request went out: possibly billed unless the code shows it never left.
  if (code !== undefined) return make('connection', true, `connection to ${ctx.endpoint} failed (${code}); retry the call`, !neverDelivered(code));
  if (status !== undefined) {
    const { errorClass, retryable } = classifyStatus(status, undefined);
    return make(errorClass, retryable, `${name} (HTTP ${status}): ${detail}`, errorClass === 'timeout' || serverSide);
  }
  // Whether the request left is unknown: counted possibly billed, as every doubt is.
  return make('http_error', false, `unexpected error: ${name}: ${detail}`, true);
}
