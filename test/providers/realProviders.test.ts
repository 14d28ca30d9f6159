import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CampaignFileError } from '../../lib/errors.js';
import { AnthropicBatchClient } from '../../lib/providers/anthropic/index.js';
import { OpenAIBatchClient } from '../../lib/providers/openai/index.js';
import { BATCH_PROVIDERS, createBatchClient, createProvider } from '../../lib/providers/registry.js';
import type { RateLimitHints } from '../../lib/providers/rateLimits.js';
import type { GenerateRequest, ModelProvider } from '../../lib/providers/types.js';
import { callWithRetry } from '../../lib/run/callWithRetry.js';
import type { Attempt } from '../../lib/run/callWithRetry.js';
import chatCompletion from '../fixtures/providers/openai-chat-completion.json' with { type: 'json' };
import message from '../fixtures/providers/anthropic-message.json' with { type: 'json' };
import { startWireServer } from './helpers/wireServer.js';
import type { RecordedRequest, WireServer } from './helpers/wireServer.js';

const KEY = 'sk-proj-SECRET-7f3a9c21e5b84d06';
const REQ: GenerateRequest = { messages: [{ role: 'user', content: 'Was what Finn did wrong?' }], settings: { max_tokens: 32 } };
const FAST = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, timeoutMs: 5_000 };

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  vi.restoreAllMocks();
});

const authOf = (r: RecordedRequest) => String(r.headers.authorization ?? r.headers['x-api-key'] ?? '');

describe('registry: real providers', () => {
  it('builds openai, anthropic and openai-compatible adapters from campaign entries', async () => {
    server = await startWireServer([{ json: chatCompletion }, { json: message }, { json: chatCompletion }]);
    const env = { MY_OPENAI: KEY, MY_ANTHROPIC: 'sk-ant-other-key-000', VLLM_KEY: 'vllm-key-1234' };
    const openai = await createProvider({ id: 'g', provider: 'openai', model: 'gpt-4.1-mini', base_url: `${server.url}/v1`, api_key_env: 'MY_OPENAI' }, { seed: 1, env });
    const anthropic = await createProvider({ id: 'c', provider: 'anthropic', model: 'claude-haiku-4-5', base_url: server.url, api_key_env: 'MY_ANTHROPIC' }, { seed: 1, env });
    const vllm = await createProvider({ id: 'q', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: 'VLLM_KEY' }, { seed: 1, env });
    expect([openai.id, anthropic.id, vllm.id]).toEqual(['openai/gpt-4.1-mini', 'anthropic/claude-haiku-4-5', 'openai-compatible/qwen3-8b']);
    for (const p of [openai, anthropic, vllm]) await p.generate(REQ);
    const [a, b, c] = server.requests;
    expect(authOf(a!)).toContain(KEY);
    expect(authOf(b!)).toContain('sk-ant-other-key-000');
    expect(authOf(c!)).toContain('vllm-key-1234');
    expect(c?.body).toMatchObject({ model: 'qwen3-8b', max_tokens: 32 });
  });

  it('reads the documented default variable when api_key_env is absent', async () => {
    server = await startWireServer([{ json: chatCompletion }]);
    const p = await createProvider({ id: 'g', provider: 'openai', model: 'gpt-4.1-mini', base_url: `${server.url}/v1` }, { seed: 1, env: { OPENAI_API_KEY: KEY } });
    await p.generate(REQ);
    expect(authOf(server.requests[0]!)).toBe(`Bearer ${KEY}`);
  });

  it('an openai-compatible server without api_key_env is sent the keyless placeholder', async () => {
    server = await startWireServer([{ json: chatCompletion }]);
    const p = await createProvider({ id: 'q', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1` }, { seed: 1, env: {} });
    await p.generate(REQ);
    expect(authOf(server.requests[0]!)).toBe('Bearer EMPTY');
  });

  it('a missing key variable is a CampaignFileError naming file, path and variable', async () => {
    const err = await createProvider({ id: 'g', provider: 'openai', model: 'gpt-4.1-mini', api_key_env: 'TEAM_OPENAI_KEY' }, { seed: 1, file: 'demo.yaml', env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CampaignFileError);
    expect((err as Error).message).toBe(
      'demo.yaml: models[g].api_key_env: environment variable TEAM_OPENAI_KEY is not set; export the API key under that name before the run (the key never goes in the campaign file)',
    );
    await expect(createProvider({ id: 'j', provider: 'anthropic', model: 'claude-haiku-4-5', role: 'judge' }, { seed: 1, file: 'demo.yaml', env: {} })).rejects.toThrow(
      /^demo\.yaml: judge\.api_key_env: environment variable ANTHROPIC_API_KEY is not set/,
    );
    await expect(createProvider({ id: 'q', provider: 'openai-compatible', model: 'qwen3-8b' }, { seed: 1, file: 'demo.yaml', env: {} })).rejects.toThrow(
      /^demo\.yaml: models\[q\]\.base_url: is required for provider openai-compatible/,
    );
  });

  it('reports rate-limit headers keyed by provider id', async () => {
    server = await startWireServer([{ json: chatCompletion, headers: { 'x-ratelimit-remaining-tokens': '1000', 'x-ratelimit-reset-tokens': '1.5s' } }]);
    const seen: [string, RateLimitHints][] = [];
    const p = await createProvider(
      { id: 'g', provider: 'openai', model: 'gpt-4.1-mini', base_url: `${server.url}/v1` },
      { seed: 1, env: { OPENAI_API_KEY: KEY }, onRateLimitHints: (id, h) => seen.push([id, h]) },
    );
    await p.generate(REQ);
    expect(seen).toEqual([['openai/gpt-4.1-mini', { remainingTokens: 1000, resetTokensMs: 1500 }]]);
  });
});

describe('an API key never leaves the adapter', () => {
  // A hostile or careless server echoes the credential into every kind of error body.
  const echo = (status: number) => ({ from: (r: RecordedRequest) => ({ status, json: { error: { message: `bad credential: ${authOf(r)}`, type: 'invalid_request_error' } } }) });

  async function attemptsAgainst(p: ModelProvider): Promise<Attempt[]> {
    const attempts: Attempt[] = [];
    for (let i = 0; i < 4; i++) await callWithRetry(p, REQ, { ...FAST, maxAttempts: 1 }, (a) => attempts.push(a));
    return attempts;
  }

  for (const provider of ['openai', 'anthropic'] as const) {
    it(`${provider}: not in error messages, causes, stored attempts, settings or console output`, async () => {
      const malformed = { from: (r: RecordedRequest) => ({ status: 200, raw: `{"choices": [ ${authOf(r)}` }) };
      const failures = [echo(401), echo(500), echo(429), malformed];
      server = await startWireServer([...failures, ...failures, { json: provider === 'openai' ? chatCompletion : message }]);
      const logged: string[] = [];
      for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
        vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map((a) => inspect(a, { depth: 8 })).join(' ')));
      }
      const p = await createProvider(
        { id: 'm', provider, model: provider === 'openai' ? 'gpt-4.1-mini' : 'claude-haiku-4-5', base_url: provider === 'openai' ? `${server.url}/v1` : server.url, api_key_env: 'K' },
        { seed: 1, env: { K: KEY } },
      );
      const errors: unknown[] = [];
      for (let i = 0; i < 4; i++) errors.push(await p.generate(REQ).catch((e: unknown) => e));
      const attempts = await attemptsAgainst(p);
      const ok = await p.generate(REQ);
      // the server really did see the key and echo it
      expect(server.requests.every((r) => authOf(r).includes(KEY))).toBe(true);
      expect(errors.map((e) => p.classifyError(e).errorClass)).toEqual(['auth', 'server_error', 'rate_limit', 'malformed_response']);
      expect(attempts.map((a) => (a.ok ? 'ok' : a.errorClass))).toEqual(['auth', 'server_error', 'rate_limit', 'malformed_response']);
      const everything = [
        ...errors.map((e) => inspect(e, { depth: 8, showHidden: true })),
        ...errors.map((e) => String(e)),
        ...errors.map((e) => JSON.stringify(e)),
        JSON.stringify(attempts),
        JSON.stringify(ok),
        inspect(p, { depth: 8, showHidden: true }),
        JSON.stringify(p),
        ...logged,
      ].join('\n');
      expect(everything).toContain('[redacted]');
      expect(everything).not.toContain(KEY);
    });
  }
});

describe('registry: batch clients', () => {
  it('builds the batch client of openai and anthropic entries and refuses providers without a batch API', async () => {
    const env = { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: 'sk-ant-other-key-000' };
    expect(BATCH_PROVIDERS).toEqual(['anthropic', 'bedrock', 'openai']);
    expect(await createBatchClient({ id: 'g', provider: 'openai', model: 'gpt-4.1-mini' }, { seed: 1, env })).toBeInstanceOf(OpenAIBatchClient);
    expect(await createBatchClient({ id: 'c', provider: 'anthropic', model: 'claude-haiku-4-5' }, { seed: 1, env })).toBeInstanceOf(AnthropicBatchClient);
    await expect(createBatchClient({ id: 'q', provider: 'openai-compatible', model: 'qwen3-8b', base_url: 'http://127.0.0.1:9/v1' }, { seed: 1, file: 'demo.yaml', env })).rejects.toThrow(
      'demo.yaml: model "q": provider "openai-compatible" has no batch API; use mode: sync, or one of anthropic, bedrock, openai',
    );
    await expect(createBatchClient({ id: 'g', provider: 'openai', model: 'gpt-4.1-mini' }, { seed: 1, file: 'demo.yaml', env: {} })).rejects.toThrow(
      /^demo\.yaml: models\[g\]\.api_key_env: environment variable OPENAI_API_KEY is not set/,
    );
  });

  it('a batch submission that fails does not carry the key either', async () => {
    server = await startWireServer([{ from: (r: RecordedRequest) => ({ status: 401, json: { error: { message: `bad credential: ${authOf(r)}` } } }) }]);
    const c = await createBatchClient({ id: 'g', provider: 'openai', model: 'gpt-4.1-mini', base_url: `${server.url}/v1` }, { seed: 1, env: { OPENAI_API_KEY: KEY } });
    const err = await c.submit([{ customId: 'a', request: REQ }]).catch((e: unknown) => e);
    expect(authOf(server.requests[0]!)).toContain(KEY);
    expect(err).toMatchObject({ errorClass: 'auth', retryable: false });
    expect(inspect(err, { depth: 8, showHidden: true })).not.toContain(KEY);
  });
});
