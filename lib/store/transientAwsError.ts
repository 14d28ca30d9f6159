/**
 * Which failures of S3 and DynamoDB pass if the same work is tried again a little later: throttling
 * (S3 503 SlowDown, DynamoDB ThrottlingException / ProvisionedThroughputExceededException), server
 * faults (5xx, InternalError) and broken connections. The SDK retries each call three times; a
 * failure that outlasts them reaches the worker, which fails its batch. The worker names such a
 * failure `TransientAwsError` (functions/worker/handler.ts) and the state machine invokes the batch
 * again (infra/constructs/Pipeline.ts); every other error goes to the give-up step as before.
 * Read by shape, not by class: lib/ does not import the AWS SDK's error classes, and an error may
 * arrive wrapped (a SondageError with the SDK's error as `cause`).
 */

/** Error names (`err.name`, the SDK's error code) that mean "not now", never "not this". */
const TRANSIENT_NAMES: ReadonlySet<string> = new Set([
  // Throttling
  'SlowDown',
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  // Server faults
  'InternalError',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'RequestTimeoutException',
  // The SDK's own socket and connection timeouts
  'TimeoutError',
]);

/** Node's socket errors of a connection that broke or could not be made just now. */
const TRANSIENT_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'ECONNABORTED']);

interface SdkShape {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly $fault?: unknown;
  readonly $retryable?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: unknown };
  readonly cause?: unknown;
}

function transientHere(e: SdkShape): boolean {
  if (typeof e.name === 'string' && TRANSIENT_NAMES.has(e.name)) return true;
  if (typeof e.code === 'string' && TRANSIENT_CODES.has(e.code)) return true;
  // An SDK service error: a server fault, a 5xx or a 429, or one the SDK itself marks retryable.
  if (e.$metadata !== undefined && typeof e.$metadata === 'object') {
    const status = e.$metadata.httpStatusCode;
    if (e.$fault === 'server' || e.$retryable !== undefined) return true;
    if (typeof status === 'number' && (status >= 500 || status === 429)) return true;
  }
  return false;
}

/**
 * Whether `err`, or an error it wraps (`cause`, at most 8 deep), is a transient S3 / DynamoDB /
 * network failure. A conditional-check failure, an access denial, a missing table or bucket, a
 * validation error are not: trying again would fail the same way.
 * @example isTransientAwsError(Object.assign(new Error('Please reduce your request rate.'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } })) // true
 */
export function isTransientAwsError(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e !== null && typeof e === 'object'; depth++) {
    if (transientHere(e as SdkShape)) return true;
    e = (e as SdkShape).cause;
  }
  return false;
}
