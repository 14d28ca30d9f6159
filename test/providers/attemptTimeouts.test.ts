import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { modelEntrySchema } from '../../lib/battery/schemas.js';
import { DEFAULT_ATTEMPT_TIMEOUT_S, sdkTimeoutMs } from '../../lib/providers/attemptTimeouts.js';
import { ProviderCallError } from '../../lib/providers/errors.js';
import { OpenAIChatProvider } from '../../lib/providers/openai/index.js';
import { createProvider } from '../../lib/providers/registry.js';
import { fetchWithTimeouts, transportAgent } from '../../lib/providers/transportTimeouts.js';
import type { GenerateRequest, ModelProvider } from '../../lib/providers/types.js';
import { DEFAULT_RETRY, callWithRetry } from '../../lib/run/callWithRetry.js';
import type { Attempt } from '../../lib/run/callWithRetry.js';
import { closeServer, listenLocal } from '../helpers/localServer.js';
import { useWireServer } from './helpers/wireServer.js';

// The attempt timeout (`timeout_s`) is the run's; the SDK's timeout and Node's fetch transport
// timeouts sit behind it, follow it, and never end an attempt unnoticed: whichever fires, a request
// sent and never answered is counted possibly billed.

const REQ: GenerateRequest = { messages: [{ role: 'user', content: 'Was what Finn did wrong?' }], settings: { max_tokens: 16, temperature: 0 } };
const KEY_ENV = 'SONDAGE_TEST_TIMEOUT_KEY';
const ENV = { [KEY_ENV]: 'sk-test-timeouts-0123456789' };

const wire = useWireServer();

/** The adapters a campaign builds, each at a server that never answers, with a half-second attempt timeout. */
async function hangingProviders(): Promise<Array<[string, ModelProvider]>> {
  const server = await wire.start([{ hang: true }]);
  const entries = [
    { id: 'o', provider: 'openai', model: 'gpt-4.1-mini', base_url: `${server.url}/v1` },
    { id: 'a', provider: 'anthropic', model: 'claude-haiku-4-5', base_url: server.url },
    { id: 'c', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1` },
  ];
  return Promise.all(entries.map(async (e) => [e.provider, await createProvider({ ...e, api_key_env: KEY_ENV, timeout_s: 0.5 }, { seed: 1, env: ENV })] as [string, ModelProvider]));
}

describe('attempt timeouts and the timeouts behind them', () => {
  it('defaults above the SDKs\' own 600 s, and accepts a timeout_s up to an hour in the campaign file', () => {
    expect(DEFAULT_ATTEMPT_TIMEOUT_S).toBeGreaterThan(600);
    expect(DEFAULT_RETRY.timeoutMs).toBe(DEFAULT_ATTEMPT_TIMEOUT_S * 1000);
    const entry = { id: 'r', provider: 'openai', model: 'o3' };
    expect(modelEntrySchema.safeParse({ ...entry, timeout_s: 900 }).success).toBe(true);
    const tooLong = modelEntrySchema.safeParse({ ...entry, timeout_s: 7200 });
    expect(tooLong.success).toBe(false);
    expect(JSON.stringify(tooLong.error?.issues)).toMatch(/3600/);
    // The SDK's backstop is above the attempt timeout, by a tenth, 1 to 30 s.
    expect(sdkTimeoutMs(660_000)).toBe(690_000);
    expect(sdkTimeoutMs(500)).toBe(1_500);
    expect(sdkTimeoutMs(60_000)).toBe(66_000);
  });

  it.each(['openai', 'anthropic', 'openai-compatible'])('%s: the SDK gives up a little after the model\'s timeout_s, not after its own 10 minutes', async (name) => {
    const provider = (await hangingProviders()).find(([n]) => n === name)![1];
    const started = performance.now();
    // No signal: only the SDK's own timeout can end this request.
    const err = await provider.generate(REQ).then(() => undefined, (e: unknown) => e);
    const tookMs = performance.now() - started;
    expect(err).toBeInstanceOf(ProviderCallError);
    expect(err).toMatchObject({ errorClass: 'timeout', retryable: true });
    // Above the attempt timeout (0.5 s), so that the run's timer fires first; far below 600 s.
    expect(tookMs).toBeGreaterThanOrEqual(1_000);
    expect(tookMs).toBeLessThan(5_000);
  }, 15_000);

  it('an attempt the SDK (or its transport) timed out is counted sent and unanswered, as one the run timed out', async () => {
    const server = await wire.start([{ hang: true }]);
    // The SDK's timeout (0.3 s, as a transport cutting at 300 s would) below the run's attempt timeout (5 s).
    const provider = await createProvider({ id: 'o', provider: 'openai', model: 'gpt-4.1-mini', base_url: `${server.url}/v1`, api_key_env: KEY_ENV }, { seed: 1, env: ENV, timeoutMs: 300 });
    const attempts: Attempt[] = [];
    const final = await callWithRetry(provider, REQ, { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, timeoutMs: 5_000 }, (a) => attempts.push(a));
    expect(final).toMatchObject({ ok: false, errorClass: 'timeout' });
    expect(attempts).toHaveLength(2);
    for (const a of attempts) expect(a).toMatchObject({ ok: false, errorClass: 'timeout', unanswered: true });
    expect(server.requests).toHaveLength(2);
  }, 15_000);

  it('sends each request through an undici Agent whose header and body timeouts follow the SDK\'s, not fetch\'s 300 s', async () => {
    const seen: unknown[] = [];
    const recording: typeof fetch = async (input, init) => {
      seen.push((init as { dispatcher?: unknown } | undefined)?.dispatcher);
      return new Response(JSON.stringify({ error: { message: 'no' } }), { status: 400, headers: { 'content-type': 'application/json' } });
    };
    const p = new OpenAIChatProvider({ model: 'gpt-4.1-mini', apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', timeoutMs: 700_000, fetch: recording });
    await p.generate(REQ).catch(() => undefined);
    expect(seen).toHaveLength(1);
    const agent = await transportAgent(701_000);
    expect(agent?.constructor.name).toBe('Agent');
    expect(seen[0]).toBe(agent);
  });

  it('the Agent\'s header timeout is the one fetch obeys: a shorter one cuts a slow reply, a longer one waits for it', async () => {
    // Headers after 2.5 s: fetch's own 300 s would wait; an Agent at 1 s must not, one at 5 s must.
    const server = createServer((_req, res) => setTimeout(() => res.end('late'), 2_500));
    const { url } = await listenLocal(server);
    try {
      const short = await fetchWithTimeouts(1_000)(url).then(() => undefined, (e: unknown) => e);
      const codes = JSON.stringify(short, Object.getOwnPropertyNames(short as object)) + String((short as { cause?: { code?: string } }).cause?.code);
      expect(codes).toMatch(/UND_ERR_HEADERS_TIMEOUT/);
      const long = await fetchWithTimeouts(5_000)(url);
      expect(await long.text()).toBe('late');
    } finally {
      await closeServer(server);
    }
  }, 15_000);
});
