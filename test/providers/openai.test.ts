import { describe, expect, it } from 'vitest';
import type { ProviderCallError } from '../../lib/providers/errors.js';
import { OpenAIChatProvider, fromWireResponse, toWireRequest } from '../../lib/providers/openai/index.js';
import { costUsd, priceFor } from '../../lib/pricing/pricing.js';
import type { RateLimitHints } from '../../lib/providers/rateLimits.js';
import type { GenerateRequest } from '../../lib/providers/types.js';
import { callWithRetry } from '../../lib/run/callWithRetry.js';
import type { Attempt } from '../../lib/run/callWithRetry.js';
import chatCompletion from '../fixtures/providers/openai-chat-completion.json' with { type: 'json' };
import error401 from '../fixtures/providers/openai-error-401.json' with { type: 'json' };
import error429 from '../fixtures/providers/openai-error-429.json' with { type: 'json' };
import contentFilter from '../fixtures/providers/openai-error-content-filter.json' with { type: 'json' };
import { useWireServer } from './helpers/wireServer.js';
import type { WireReply } from './helpers/wireServer.js';
import { callFailure } from './helpers/callFailure.js';

const KEY = 'sk-test-openai-0123456789abcdef';
const REQ: GenerateRequest = {
  messages: [
    { role: 'system', content: 'Answer in one sentence.' },
    { role: 'user', content: 'Was what Finn did wrong?' },
  ],
  settings: { max_tokens: 64, temperature: 0, seed: 7, logprobs: true, top_logprobs: 5 },
};

const wire = useWireServer();

async function provider(script: readonly WireReply[], hints?: RateLimitHints[]): Promise<OpenAIChatProvider> {
  const server = await wire.start(script);
  return new OpenAIChatProvider({
    model: 'gpt-4.1-mini',
    apiKey: KEY,
    baseURL: `${server.url}/v1`,
    ...(hints ? { onRateLimitHints: (h: RateLimitHints) => hints.push(h) } : {}),
  });
}

const failure = (p: OpenAIChatProvider, signal?: AbortSignal): Promise<ProviderCallError> => callFailure(p, REQ, signal);

const FAST = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 5_000 };

describe('toWireRequest / fromWireResponse (openai)', () => {
  it('sends only the settings the campaign set, with max_completion_tokens and logprobs', () => {
    expect(toWireRequest(REQ, 'gpt-4.1-mini')).toEqual({
      model: 'gpt-4.1-mini',
      messages: REQ.messages,
      max_completion_tokens: 64,
      temperature: 0,
      seed: 7,
      logprobs: true,
      top_logprobs: 5,
    });
    expect(toWireRequest({ messages: REQ.messages, settings: {} }, 'm')).toEqual({ model: 'm', messages: REQ.messages });
    expect(toWireRequest({ messages: REQ.messages, settings: { reasoning_effort: 'none', stop: ['\n'], top_p: 0.9 } }, 'm')).toMatchObject({
      reasoning_effort: 'none',
      stop: ['\n'],
      top_p: 0.9,
    });
  });

  it("turns thinking off on vLLM through the chat template's enable_thinking, and passes chat_template_kwargs; refuses them on OpenAI's API", () => {
    const off = { messages: REQ.messages, settings: { thinking: 'off' as const } };
    expect(toWireRequest(off, 'Qwen/Qwen3-8B', 'openai-compatible').chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(toWireRequest({ messages: REQ.messages, settings: { thinking: 'off', chat_template_kwargs: { enable_thinking: true, style: 'x' } } }, 'q', 'openai-compatible').chat_template_kwargs).toEqual({ enable_thinking: true, style: 'x' });
    expect(toWireRequest(off, 'gpt-4.1-mini').chat_template_kwargs).toBeUndefined();
    expect(toWireRequest({ messages: REQ.messages, settings: {} }, 'q', 'openai-compatible').chat_template_kwargs).toBeUndefined();
    expect(() => toWireRequest({ messages: REQ.messages, settings: { chat_template_kwargs: { enable_thinking: false } } }, 'gpt-4.1-mini')).toThrow(/chat_template_kwargs is a vLLM extension/);
  });

  it('uses max_tokens for openai-compatible servers', () => {
    const body = toWireRequest(REQ, 'qwen3-8b', 'openai-compatible');
    expect(body.max_tokens).toBe(64);
    expect(body.max_completion_tokens).toBeUndefined();
  });

  it('maps usage, finish reason and the first token top-k logprobs', () => {
    const r = fromWireResponse(chatCompletion);
    expect(r.text).toBe('Yes, what Finn did was wrong because he broke his promise.');
    expect(r.finish_reason).toBe('stop');
    expect(r.usage).toEqual({ input_tokens: 57, output_tokens: 14, cached_input_tokens: 0 });
    expect(r.logprobs).toEqual({
      Yes: { logprob: -0.0123, exact: true },
      No: { logprob: -4.6001, exact: true },
      yes: { logprob: -7.25, exact: true },
    });
  });

  it('reads cached prompt tokens, which costUsd prices at the table\'s cached-input price', () => {
    const cachedBody = { ...chatCompletion, usage: { ...chatCompletion.usage, prompt_tokens_details: { cached_tokens: 40 } } };
    const r = fromWireResponse(cachedBody);
    expect(r.usage).toEqual({ input_tokens: 57, output_tokens: 14, cached_input_tokens: 40 });
    const price = priceFor({ provider: 'openai', model: 'gpt-4.1-mini' })!;
    expect(price.cached_input_per_mtok).toBe(0.1);
    expect(costUsd(price, r.usage)).toBeCloseTo((17 * 0.4 + 40 * 0.1 + 14 * 1.6) / 1e6, 15);
    // A body without the details says nothing about the cache.
    const { prompt_tokens_details: _d, ...bare } = chatCompletion.usage;
    expect(fromWireResponse({ ...chatCompletion, usage: bare }).usage).toEqual({ input_tokens: 57, output_tokens: 14 });
  });

  it('returns no logprobs when none were asked for', () => {
    const { logprobs: _l, ...choice } = chatCompletion.choices[0]!;
    expect(fromWireResponse({ ...chatCompletion, choices: [choice] }).logprobs).toBeUndefined();
  });

  it('turns a refusal and a content-filter stop into permanent errors', () => {
    const refused = { ...chatCompletion, choices: [{ ...chatCompletion.choices[0]!, message: { role: 'assistant', content: null, refusal: "I can't help with that." } }] };
    expect(() => fromWireResponse(refused)).toThrow(expect.objectContaining({ errorClass: 'refusal', retryable: false }));
    const filtered = { ...chatCompletion, choices: [{ ...chatCompletion.choices[0]!, finish_reason: 'content_filter' }] };
    expect(() => fromWireResponse(filtered)).toThrow(expect.objectContaining({ errorClass: 'content_filter', retryable: false }));
  });

  it('rejects a body without choices or usage as a malformed response', () => {
    expect(() => fromWireResponse({ choices: [] })).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
    const { usage: _u, ...noUsage } = chatCompletion;
    expect(() => fromWireResponse(noUsage)).toThrow(/usage/);
  });
});

describe('OpenAIChatProvider against a local wire server', () => {
  it('sends the exact body and headers through the real SDK and stores the settings sent', async () => {
    const hints: RateLimitHints[] = [];
    const p = await provider(
      [
        {
          json: chatCompletion,
          headers: {
            'x-ratelimit-limit-requests': '500',
            'x-ratelimit-remaining-requests': '499',
            'x-ratelimit-reset-requests': '120ms',
            'x-ratelimit-limit-tokens': '200000',
            'x-ratelimit-remaining-tokens': '199590',
            'x-ratelimit-reset-tokens': '6m0s',
          },
        },
      ],
      hints,
    );
    const r = await p.generate(REQ);
    const [sent] = wire.current.requests;
    expect(sent?.method).toBe('POST');
    expect(sent?.url).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.headers['content-type']).toBe('application/json');
    // the SDK's own retries are off: retries live in callWithRetry
    expect(sent?.headers['x-stainless-retry-count']).toBe('0');
    expect(sent?.body).toEqual({
      model: 'gpt-4.1-mini',
      messages: [
        { role: 'system', content: 'Answer in one sentence.' },
        { role: 'user', content: 'Was what Finn did wrong?' },
      ],
      max_completion_tokens: 64,
      temperature: 0,
      seed: 7,
      logprobs: true,
      top_logprobs: 5,
    });
    expect(r.usage).toEqual({ input_tokens: 57, output_tokens: 14, cached_input_tokens: 0 });
    expect(r.logprobs?.['Yes']).toEqual({ logprob: -0.0123, exact: true });
    expect(r.settings_sent).toEqual({ model: 'gpt-4.1-mini', max_completion_tokens: 64, temperature: 0, seed: 7, logprobs: true, top_logprobs: 5 });
    expect(p.id).toBe('openai/gpt-4.1-mini');
    expect(p.simulated).toBe(false);
    expect(hints).toEqual([
      { limitRequests: 500, limitTokens: 200000, remainingRequests: 499, remainingTokens: 199590, resetRequestsMs: 120, resetTokensMs: 360000 },
    ]);
  });

  it('classifies 429 as rate_limit with the wait from retry-after-ms or retry-after, and reports its headers', async () => {
    const hints: RateLimitHints[] = [];
    const p = await provider(
      [
        { status: 429, headers: { 'retry-after-ms': '1250', 'x-ratelimit-remaining-requests': '0' }, json: error429 },
        { status: 429, headers: { 'retry-after': '7' }, json: error429 },
        { status: 429, json: error429 },
      ],
      hints,
    );
    const a = await failure(p);
    expect(a.status).toBe(429);
    expect(p.classifyError(a)).toEqual({ retry: true, kind: 'rate_limit', retryAfterMs: 1250, errorClass: 'rate_limit' });
    expect(a.message).toMatch(/^openai\/gpt-4\.1-mini: HTTP 429 rate_limit: .*Rate limit reached/);
    expect(hints).toEqual([{ remainingRequests: 0 }]);
    expect(p.classifyError(await failure(p))).toEqual({ retry: true, kind: 'rate_limit', retryAfterMs: 7000, errorClass: 'rate_limit' });
    expect(p.classifyError(await failure(p))).toEqual({ retry: true, kind: 'rate_limit', errorClass: 'rate_limit' });
  });

  it('classifies 500 and 503 as transient, 401, 403, 404 and a content filter as permanent', async () => {
    const p = await provider([
      { status: 500, json: { error: { message: 'The server had an error while processing your request.', type: 'server_error' } } },
      { status: 503, headers: { 'retry-after': '2' }, json: { error: { message: 'Slow down', type: 'server_error' } } },
      { status: 401, json: error401 },
      { status: 403, json: { error: { message: 'Country, region, or territory not supported', code: 'unsupported_country_region_territory' } } },
      { status: 404, json: { error: { message: 'The model `gpt-9` does not exist', code: 'model_not_found' } } },
      { status: 400, json: contentFilter },
      { status: 400, json: { error: { message: "Unsupported parameter: 'max_tokens'", code: 'unsupported_parameter' } } },
    ]);
    const decisions = [];
    for (let i = 0; i < 7; i++) decisions.push(p.classifyError(await failure(p)));
    expect(decisions).toEqual([
      // A 5xx may come from a gateway after the request ran upstream: possibly billed (possiblyBilled.test.ts).
      { retry: true, kind: 'transient', errorClass: 'server_error', possiblyBilled: true },
      { retry: true, kind: 'transient', retryAfterMs: 2000, errorClass: 'server_error', possiblyBilled: true },
      { retry: false, errorClass: 'auth' },
      { retry: false, errorClass: 'permission' },
      { retry: false, errorClass: 'not_found' },
      { retry: false, errorClass: 'content_filter' },
      { retry: false, errorClass: 'bad_request' },
    ]);
  });

  it('reports malformed JSON as a retryable ProviderError with the parse error as cause', async () => {
    const p = await provider([{ raw: '{"id": "chatcmpl-1", "choices": [' }]);
    const err = await failure(p);
    expect(err.errorClass).toBe('malformed_response');
    expect(err.cause).toBeInstanceOf(SyntaxError);
    expect(err.message).toMatch(/body is not JSON/);
    expect(p.classifyError(err)).toEqual({ retry: true, kind: 'transient', errorClass: 'malformed_response', possiblyBilled: true });
  });

  it('reports a dropped connection as transient', async () => {
    const p = await provider([{ drop: true }]);
    const err = await failure(p);
    expect(p.classifyError(err)).toEqual({ retry: true, kind: 'transient', errorClass: 'connection', possiblyBilled: true });
  });

  it('gives up on a hanging response through the AbortSignal; callWithRetry records a timeout and retries', async () => {
    const p = await provider([{ hang: true }]);
    const attempts: Attempt[] = [];
    const final = await callWithRetry(p, REQ, { ...FAST, maxAttempts: 2, timeoutMs: 150 }, (a) => attempts.push(a));
    expect(final).toMatchObject({ ok: false, errorClass: 'timeout', retryable: true });
    expect(attempts.map((a) => (a.ok ? 'ok' : a.errorClass))).toEqual(['timeout', 'timeout']);
    expect(wire.current.requests).toHaveLength(2);
  });

  it('an abort by the caller is not retried', async () => {
    const p = await provider([{ hang: true }]);
    const controller = new AbortController();
    const pending = failure(p, controller.signal);
    while (wire.current.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(p.classifyError(await pending)).toEqual({ retry: false, errorClass: 'aborted' });
  });

  it('callWithRetry retries 429 and 503 through to a success, and does not retry a 401', async () => {
    const p = await provider([
      { status: 429, headers: { 'retry-after-ms': '1' }, json: error429 },
      { status: 503, json: { error: { message: 'overloaded' } } },
      { json: chatCompletion },
    ]);
    const attempts: Attempt[] = [];
    const final = await callWithRetry(p, REQ, FAST, (a) => attempts.push(a));
    expect(final.ok).toBe(true);
    expect(attempts.map((a) => (a.ok ? 'ok' : a.errorClass))).toEqual(['rate_limit', 'server_error', 'ok']);
    await wire.current.close();

    const q = await provider([{ status: 401, json: error401 }]);
    const once: Attempt[] = [];
    expect(await callWithRetry(q, REQ, FAST, (a) => once.push(a))).toMatchObject({ ok: false, errorClass: 'auth', retryable: false });
    expect(once).toHaveLength(1);
    expect(wire.current.requests).toHaveLength(1);
  });
});
