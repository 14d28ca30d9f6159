import { describe, expect, it } from 'vitest';
import { AnthropicMessagesProvider, fromWireResponse, toWireRequest } from '../../lib/providers/anthropic/index.js';
import { ProviderCallError } from '../../lib/providers/errors.js';
import type { RateLimitHints } from '../../lib/providers/rateLimits.js';
import type { GenerateRequest } from '../../lib/providers/types.js';
import message from '../fixtures/providers/anthropic-message.json' with { type: 'json' };
import messageThinking from '../fixtures/providers/anthropic-message-thinking.json' with { type: 'json' };
import messageRefusal from '../fixtures/providers/anthropic-message-refusal.json' with { type: 'json' };
import error429 from '../fixtures/providers/anthropic-error-429.json' with { type: 'json' };
import error529 from '../fixtures/providers/anthropic-error-529.json' with { type: 'json' };
import { useWireServer } from './helpers/wireServer.js';
import type { WireReply } from './helpers/wireServer.js';
import { callFailure } from './helpers/callFailure.js';

const KEY = 'test-anthropic-key-0123456789abcdef';
const REQ: GenerateRequest = {
  messages: [
    { role: 'system', content: 'Answer in one sentence.' },
    { role: 'user', content: 'War das, was Finn getan hat, falsch?' },
  ],
  settings: { max_tokens: 64, temperature: 0, seed: 7, thinking: 'off', logprobs: true },
};

/** REQ as the Messages API receives it: the system message moved out, thinking off said as disabled, the seed and logprobs dropped. */
const REQ_ON_THE_WIRE = {
  model: 'claude-haiku-4-5',
  max_tokens: 64,
  system: 'Answer in one sentence.',
  messages: [{ role: 'user', content: 'War das, was Finn getan hat, falsch?' }],
  temperature: 0,
  thinking: { type: 'disabled' },
};

const wire = useWireServer();

async function provider(script: readonly WireReply[], hints?: RateLimitHints[]): Promise<AnthropicMessagesProvider> {
  const server = await wire.start(script);
  return new AnthropicMessagesProvider({
    model: 'claude-haiku-4-5',
    apiKey: KEY,
    baseURL: server.url,
    ...(hints ? { onRateLimitHints: (h: RateLimitHints) => hints.push(h) } : {}),
  });
}

const failure = (p: AnthropicMessagesProvider): Promise<ProviderCallError> => callFailure(p, REQ);

describe('toWireRequest / fromWireResponse (anthropic)', () => {
  it('moves system messages to `system`, sends thinking off as disabled, and drops what Messages lacks', () => {
    expect(toWireRequest(REQ, 'claude-haiku-4-5')).toEqual(REQ_ON_THE_WIRE);
  });

  it('sends a thinking budget, and refuses one that is not below max_tokens', () => {
    const body = toWireRequest({ messages: REQ.messages, settings: { max_tokens: 4096, thinking: { budget_tokens: 1024 } } }, 'claude-sonnet-4-5');
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(() => toWireRequest({ messages: REQ.messages, settings: { max_tokens: 1024, thinking: { budget_tokens: 1024 } } }, 'm')).toThrow(
      expect.objectContaining({ errorClass: 'bad_request', retryable: false, message: expect.stringMatching(/budget_tokens \(1024\) must be below max_tokens \(1024\)/) }),
    );
  });

  it('without settings sends max_tokens (the API requires it) and nothing else', () => {
    expect(toWireRequest({ messages: [{ role: 'user', content: 'hi' }], settings: {} }, 'm')).toEqual({
      model: 'm',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('counts cache reads and writes into input tokens', () => {
    const r = fromWireResponse(message);
    expect(r.text).toBe('Yes, what Finn did was wrong: he broke a promise he had made.');
    expect(r.finish_reason).toBe('end_turn');
    expect(r.usage).toEqual({ input_tokens: 61 + 12, output_tokens: 19, cached_input_tokens: 12 });
    expect(r.logprobs).toBeUndefined();
  });

  it('returns only the text blocks of a reply with thinking', () => {
    const r = fromWireResponse(messageThinking);
    expect(r.text).toBe('Nein, was Finn getan hat, war nicht falsch.');
    expect(r.usage).toEqual({ input_tokens: 88, output_tokens: 342, cached_input_tokens: 0 });
  });

  it('a refusal stop is a permanent error; a body without usage is malformed', () => {
    expect(() => fromWireResponse(messageRefusal)).toThrow(expect.objectContaining({ errorClass: 'refusal', retryable: false }));
    const { usage: _u, ...noUsage } = message;
    expect(() => fromWireResponse(noUsage)).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
  });
});

describe('AnthropicMessagesProvider against a local wire server', () => {
  it('sends the exact body and headers through the real SDK and stores the settings sent', async () => {
    const hints: RateLimitHints[] = [];
    const p = await provider(
      [
        {
          json: message,
          headers: {
            'anthropic-ratelimit-requests-limit': '50',
            'anthropic-ratelimit-requests-remaining': '49',
            'anthropic-ratelimit-requests-reset': new Date(Date.now() + 60_000).toISOString(),
            'anthropic-ratelimit-tokens-limit': '40000',
            'anthropic-ratelimit-tokens-remaining': '39000',
          },
        },
      ],
      hints,
    );
    const r = await p.generate(REQ);
    const [sent] = wire.current.requests;
    expect(sent?.url).toBe('/v1/messages');
    expect(sent?.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // the SDK sends the key in exactly one auth header
    expect([sent?.headers['x-api-key'], sent?.headers.authorization].filter(Boolean)).toHaveLength(1);
    expect(JSON.stringify(sent?.headers)).toContain(KEY);
    expect(sent?.headers['x-stainless-retry-count']).toBe('0');
    expect(sent?.body).toEqual(REQ_ON_THE_WIRE);
    expect(r.settings_sent).toEqual({ model: 'claude-haiku-4-5', max_tokens: 64, temperature: 0, thinking: { type: 'disabled' } });
    expect(r.usage).toEqual({ input_tokens: 73, output_tokens: 19, cached_input_tokens: 12 });
    expect(hints).toHaveLength(1);
    expect(hints[0]).toMatchObject({ limitRequests: 50, remainingRequests: 49, limitTokens: 40000, remainingTokens: 39000 });
    expect(hints[0]?.resetRequestsMs).toBeGreaterThan(0);
    expect(hints[0]?.resetRequestsMs).toBeLessThanOrEqual(60_000);
  });

  it('classifies 429 with retry-after, 529 overloaded and 500 as retryable, 401 and 400 as permanent', async () => {
    const p = await provider([
      { status: 429, headers: { 'retry-after': '3' }, json: error429 },
      { status: 529, json: error529 },
      { status: 500, json: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } },
      { status: 401, json: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } },
      { status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } } },
    ]);
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(p.classifyError(await failure(p)));
    expect(decisions).toEqual([
      { retry: true, kind: 'rate_limit', retryAfterMs: 3000, errorClass: 'rate_limit' },
      // Its own 529 overloaded_error turns the request away; a 500 may come after it ran (possiblyBilled.test.ts).
      { retry: true, kind: 'transient', errorClass: 'server_error' },
      { retry: true, kind: 'transient', errorClass: 'server_error', possiblyBilled: true },
      { retry: false, errorClass: 'auth' },
      { retry: false, errorClass: 'bad_request' },
    ]);
  });

  it('reports malformed JSON as a ProviderError with cause, and a refusal as a stored permanent error', async () => {
    const p = await provider([{ raw: '<html>502 Bad Gateway</html>' }, { json: messageRefusal }]);
    const bad = await failure(p);
    expect(bad.errorClass).toBe('malformed_response');
    expect(bad.cause).toBeInstanceOf(SyntaxError);
    const refused = await failure(p);
    expect(p.classifyError(refused)).toEqual({ retry: false, errorClass: 'refusal', usage: { input_tokens: 40, output_tokens: 7 } });
    expect(refused.message).toMatch(/refused: I can't help with that/);
  });

  it('gives up on a hanging response through the AbortSignal', async () => {
    const p = await provider([{ hang: true }]);
    const err = await p.generate(REQ, AbortSignal.timeout(100)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderCallError);
    expect((err as ProviderCallError).errorClass).toBe('aborted');
  });
});
