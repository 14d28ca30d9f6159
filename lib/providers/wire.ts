import { z } from 'zod';
import { ProviderCallError } from './errors.js';
import { parseRateLimitHeaders } from './rateLimits.js';
import type { RateLimitHints } from './rateLimits.js';
import { redactSecret, scrubError, toProviderCallError } from './sdkErrors.js';
import type { SdkErrorContext } from './sdkErrors.js';

/**
 * Reads a successful response's body as JSON. The adapters ask the SDK for the raw Response
 * (`.asResponse()`) so that they see the headers and can tell a malformed body apart: a body that
 * does not parse is a `malformed_response`, retryable (a truncated body from a proxy is the usual
 * cause), with the parse error as `cause`.
 */
export async function readJsonBody(response: Response, provider: string, secrets: readonly string[]): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const cause = err instanceof Error ? scrubError(err, secrets) : undefined;
    const head = redactSecret(text.slice(0, 80), secrets);
    throw new ProviderCallError(
      `${provider}: HTTP ${response.status} body is not JSON (${text.length} bytes, starting ${JSON.stringify(head)})`,
      provider,
      'malformed_response',
      true,
      response.status,
      undefined,
      { cause },
    );
  }
}

/** Validates a parsed body against the fields an adapter reads; extra fields are ignored. */
export function parseWire<T>(schema: z.ZodType<T>, body: unknown, provider: string, what: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new ProviderCallError(
    `${provider}: the ${what} does not have the expected shape: ${z.prettifyError(parsed.error).replace(/\n/g, '; ')}`,
    provider,
    'malformed_response',
    true,
    undefined,
    undefined,
    { cause: parsed.error },
  );
}

/**
 * One SDK call as every adapter makes it: send (the SDK's `.asResponse()`), report the rate-limit
 * headers of the answer or of the error, and read the body as JSON; whatever fails comes out as a
 * classified, secret-free ProviderCallError. A body cut off mid-stream surfaces while reading, as
 * an abort or a connection error.
 */
export async function sendForJson(
  send: () => Promise<Response>,
  ctx: SdkErrorContext,
  onHints: ((hints: RateLimitHints) => void) | undefined,
): Promise<unknown> {
  const report = (headers: Headers | undefined) => {
    if (!onHints || !headers) return;
    const hints = parseRateLimitHeaders(headers);
    if (hints) onHints(hints);
  };
  let response: Response;
  try {
    response = await send();
  } catch (err) {
    report((err as { headers?: Headers } | null)?.headers);
    throw toProviderCallError(err, ctx);
  }
  report(response.headers);
  try {
    return await readJsonBody(response, ctx.provider, ctx.secrets);
  } catch (err) {
    throw bodyCutOff(err, response.status, ctx) ?? toProviderCallError(err, ctx);
  }
}

/**
 * A body that stopped coming once the answer had begun (undici's "terminated", caused by the
 * socket closing: "other side closed", ECONNRESET): the request was delivered and the provider may
 * have run it and billed it, so it is a retryable `connection` failure counted possibly billed.
 * Undefined for what is not one (an abort, a body that did not parse), left to the usual mapping.
 */
function bodyCutOff(err: unknown, status: number, ctx: SdkErrorContext): ProviderCallError | undefined {
  if (err instanceof ProviderCallError || !(err instanceof Error) || err.name === 'AbortError') return undefined;
  const cause = scrubError(err, ctx.secrets);
  const inner = err.cause instanceof Error ? err.cause : undefined;
  const code = (inner as { code?: unknown } | undefined)?.code;
  const why = redactSecret([err.message, inner?.message, typeof code === 'string' ? code : undefined].filter((w) => w !== undefined && w !== '').join(', '), ctx.secrets).slice(0, 200);
  return new ProviderCallError(
    `${ctx.provider}: the HTTP ${status} answer from ${ctx.endpoint ?? 'the provider'} was cut off while reading it (${why}); retry the call`,
    ctx.provider,
    'connection',
    true,
    undefined,
    undefined,
    { cause, possiblyBilled: true },
  );
}
