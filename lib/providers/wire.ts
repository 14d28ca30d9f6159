import { z } from 'zod';
import { ProviderCallError } from './errors.js';
import { redactSecret, scrubError } from './sdkErrors.js';

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
