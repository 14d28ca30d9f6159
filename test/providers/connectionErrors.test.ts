import { describe, expect, it } from 'vitest';
import { AnthropicMessagesProvider } from '../../lib/providers/anthropic/AnthropicMessagesProvider.js';
import { OpenAIChatProvider } from '../../lib/providers/openai/OpenAIChatProvider.js';
import { endpointOf, redactUrlCredentials } from '../../lib/providers/sdkErrors.js';
import type { GenerateRequest, ModelProvider } from '../../lib/providers/types.js';
import { closedPort, freePort } from '../helpers/localServer.js';

// A call that never reaches a server says which server (the base URL, credentials removed) and
// why; a URL fetch refuses outright (credentials in it, a blocked port) fails for good at once
// instead of being retried as a "connection error" for minutes.

const KEY = 'sk-test-connection-0000000000';
const REQ: GenerateRequest = { messages: [{ role: 'user', content: 'hi' }], settings: { max_tokens: 5 } };


async function failure(provider: ModelProvider): Promise<{ message: string; decision: ReturnType<ModelProvider['classifyError']>; all: string }> {
  const err = await provider.generate(REQ).then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as Error,
  );
  // Everything the error holds, its causes included, as a log line might print it.
  const all = JSON.stringify(err, Object.getOwnPropertyNames(err)) + String((err.cause as Error | undefined)?.stack) + JSON.stringify((err.cause as { cause?: unknown } | undefined)?.cause ?? null, ['message']);
  return { message: err.message, decision: provider.classifyError(err), all };
}

const chat = (baseURL: string) => new OpenAIChatProvider({ model: 'qwen3-8b', apiKey: KEY, baseURL, flavour: 'openai-compatible' });

describe('connection errors name the endpoint', () => {
  it('nothing listening: the base URL and ECONNREFUSED, retryable', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const { message, decision } = await failure(chat(url));
    expect(message).toBe(`openai-compatible/qwen3-8b: connection to ${url} failed (nothing listens there, ECONNREFUSED); retry the call`);
    expect(decision).toMatchObject({ retry: true, errorClass: 'connection' });
  });

  it('Anthropic too: the base URL it was given', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const { message } = await failure(new AnthropicMessagesProvider({ model: 'claude-test', apiKey: KEY, baseURL: url }));
    expect(message).toContain(`anthropic/claude-test: connection to ${url} failed (nothing listens there, ECONNREFUSED)`);
  });

  it('a URL with a user name and password: the host without them, failed for good at the first call, the password nowhere in the error', async () => {
    const port = await freePort();
    const { message, decision, all } = await failure(chat(`http://alice:hunter2-secret@127.0.0.1:${port}/v1`));
    expect(message).toBe(
      `openai-compatible/qwen3-8b: cannot send to http://127.0.0.1:${port}/v1: its URL holds a user name or password, which fetch refuses to send; remove them from base_url (the key goes in api_key_env)`,
    );
    expect(decision).toEqual({ retry: false, errorClass: 'bad_request' });
    expect(all).not.toContain('hunter2-secret');
    expect(all).not.toContain(KEY);
  });

  it('endpointOf and redactUrlCredentials drop credentials, query and fragment', () => {
    expect(endpointOf('https://u:p@example.com:8443/v1/?key=1#x')).toBe('https://example.com:8443/v1');
    expect(endpointOf('http://localhost:8000/v1/')).toBe('http://localhost:8000/v1');
    expect(redactUrlCredentials('fetch http://u:p@h/v1 and https://x@y/')).toBe('fetch http://[redacted]@h/v1 and https://[redacted]@y/');
  });
});
