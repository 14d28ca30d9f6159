import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createProvider } from '../../lib/providers/registry.js';
import { neverDelivered } from '../../lib/providers/sdkErrors.js';
import type { GenerateRequest, ModelProvider } from '../../lib/providers/types.js';
import { callWithRetry } from '../../lib/run/callWithRetry.js';
import type { Attempt } from '../../lib/run/callWithRetry.js';
import { closeServer, closedPort, listenLocal } from '../helpers/localServer.js';
import { BedrockConverseProvider } from '../../lib/providers/bedrock/BedrockConverseProvider.js';
import { converseReply, useBedrockServer } from '../helpers/bedrockServer.js';
import type { BedrockAnswer } from '../helpers/bedrockServer.js';
import { anthropicMessage, chatCompletion, chatRefusal, useWireServer } from './helpers/wireServer.js';
import type { RecordedRequest } from './helpers/wireServer.js';

// A request that reached the provider (or a gateway in front of it) and got no usable answer may
// have been run and billed: a 5xx from a gateway (504 above all), a connection reset or closed
// after the request went out, a body cut short. Each such attempt is counted sent and unanswered
// (`unanswered`), so that its reservation is charged as possibly billed, exactly as a timed-out one.
// A request that never left (nothing listens, no such host) is not; nor is one the provider refused
// with an answer of its own (429, 400, Anthropic's 529 overloaded_error).

const REQ: GenerateRequest = { messages: [{ role: 'user', content: 'Was what Finn did wrong?' }], settings: { max_tokens: 16, temperature: 0 } };
const KEY_ENV = 'SONDAGE_TEST_BILLED_KEY';
const ENV = { [KEY_ENV]: 'sk-test-billed-0123456789abcdef' };
const FAST = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, timeoutMs: 10_000 };

const wire = useWireServer();

/** A reply each adapter reads as a success, in its own wire format. */
const SUCCESS: Record<string, (req: RecordedRequest) => { json: unknown }> = {
  'openai-compatible': (req) => chatCompletion(req, 'Yes.'),
  openai: (req) => chatCompletion(req, 'Yes.'),
  anthropic: () => anthropicMessage('Yes.', { input_tokens: 14, output_tokens: 2 }),
};

/** A 200 in which the model refused: it ran, and was billed. */
const REFUSAL: Record<string, (req: RecordedRequest) => { json: unknown }> = {
  'openai-compatible': (req) => chatRefusal(req),
  openai: (req) => chatRefusal(req),
  anthropic: () => anthropicMessage('I cannot help with that.', { input_tokens: 14, output_tokens: 2 }, 'refusal'),
};

const ADAPTERS = Object.keys(SUCCESS);

/** The adapter a campaign builds for `name`, at `url` (the API prefix added where the SDK expects it). */
function adapter(name: string, url: string): Promise<ModelProvider> {
  const base = name === 'anthropic' ? url : `${url}/v1`;
  const model = name === 'anthropic' ? 'claude-haiku-4-5' : name === 'openai' ? 'gpt-4.1-mini' : 'qwen3-8b';
  return createProvider({ id: 'm', provider: name, model, base_url: base, api_key_env: KEY_ENV }, { seed: 1, env: ENV });
}

async function attemptsAgainst(provider: ModelProvider, policy = FAST): Promise<{ attempts: Attempt[]; final: Attempt }> {
  const attempts: Attempt[] = [];
  const final = await callWithRetry(provider, REQ, policy, (a) => attempts.push(a));
  return { attempts, final };
}

describe.each(ADAPTERS)('%s: an attempt delivered and not usably answered is possibly billed', (name) => {
  it('a 504 from a gateway, then a reply: the 504 attempt is counted unanswered, the reply is not', async () => {
    const server = await wire.start([{ status: 504, raw: '<html><body>504 Gateway Time-out</body></html>', headers: { 'content-type': 'text/html' } }, { from: SUCCESS[name]! }]);
    const { attempts, final } = await attemptsAgainst(await adapter(name, server.url));
    expect(final.ok).toBe(true);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ ok: false, errorClass: 'server_error', retryable: true, unanswered: true });
    expect(server.requests).toHaveLength(2);
  });

  it.each([502, 503, 500])('an HTTP %i: counted unanswered too (a proxy may send it after the upstream ran the request)', async (status) => {
    const server = await wire.start([{ status, json: { error: { message: 'upstream failed', type: 'server_error' } } }, { from: SUCCESS[name]! }]);
    const { attempts } = await attemptsAgainst(await adapter(name, server.url));
    expect(attempts[0]).toMatchObject({ ok: false, errorClass: 'server_error', unanswered: true });
  });

  it('the server reads the request, then destroys the socket: counted unanswered, and retried', async () => {
    const server = await wire.start([{ drop: true }, { from: SUCCESS[name]! }]);
    const { attempts, final } = await attemptsAgainst(await adapter(name, server.url));
    expect(final.ok).toBe(true);
    expect(attempts[0]).toMatchObject({ ok: false, errorClass: 'connection', retryable: true, unanswered: true });
    expect(server.requests).toHaveLength(2);
  });

  it('a reply whose body is cut off mid-way (premature close while reading it): counted unanswered, and retried', async () => {
    let n = 0;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.stringify(SUCCESS[name]!({ method: 'POST', url: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }).json);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
        if (n++ > 0) return res.end(body);
        // Headers and half the body, then the connection goes.
        res.write(body.slice(0, body.length >> 1), () => setTimeout(() => req.socket.destroy(), 20));
      });
    });
    const { url } = await listenLocal(server);
    try {
      const { attempts, final } = await attemptsAgainst(await adapter(name, url));
      expect(final.ok).toBe(true);
      expect(attempts[0]).toMatchObject({ ok: false, errorClass: 'connection', retryable: true, unanswered: true, message: expect.stringMatching(/cut off while reading it/) });
      expect(n).toBe(2);
    } finally {
      await closeServer(server);
    }
  });

  it('a 200 whose body does not parse (a proxy cut it short): counted unanswered, and retried', async () => {
    const server = await wire.start([{ raw: '{"id": "cut-', headers: { 'content-type': 'application/json' } }, { from: SUCCESS[name]! }]);
    const { attempts, final } = await attemptsAgainst(await adapter(name, server.url));
    expect(final.ok).toBe(true);
    expect(attempts[0]).toMatchObject({ ok: false, errorClass: 'malformed_response', retryable: true, unanswered: true });
  });

  it('a 200 in which the model refused (it ran and was billed): priced by the usage it came with, not counted unanswered, and not retried', async () => {
    const server = await wire.start([{ from: REFUSAL[name]! }]);
    const { attempts } = await attemptsAgainst(await adapter(name, server.url));
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ ok: false, errorClass: 'refusal', retryable: false, usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } });
    expect((attempts[0] as { usage: { input_tokens: number } }).usage.input_tokens).toBeGreaterThan(0);
    expect(attempts[0]).not.toHaveProperty('unanswered');
  });

  it('a TLS handshake that fails (https to a plain HTTP port): nothing was sent, not counted', async () => {
    const server = await wire.start([{ from: SUCCESS[name]! }]);
    const { attempts } = await attemptsAgainst(await adapter(name, server.url.replace('http:', 'https:')));
    expect(attempts).toHaveLength(FAST.maxAttempts);
    for (const a of attempts) {
      expect(a).toMatchObject({ ok: false, errorClass: 'connection', retryable: true, message: expect.stringMatching(/the TLS handshake failed/) });
      expect(a).not.toHaveProperty('unanswered');
    }
    expect(server.requests).toHaveLength(0);
  });

  it('a closed port (connection refused): never delivered, not counted', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const { attempts } = await attemptsAgainst(await adapter(name, url));
    expect(attempts).toHaveLength(FAST.maxAttempts);
    for (const a of attempts) {
      expect(a).toMatchObject({ ok: false, errorClass: 'connection', retryable: true });
      expect(a).not.toHaveProperty('unanswered');
    }
  });

  it('an answer that refuses the request (429, 400): not counted', async () => {
    const server = await wire.start([
      { status: 429, headers: { 'retry-after': '0' }, json: { error: { message: 'slow down', type: 'rate_limit_error' } } },
      { status: 400, json: { error: { message: 'bad', type: 'invalid_request_error' } } },
    ]);
    const { attempts } = await attemptsAgainst(await adapter(name, server.url));
    expect(attempts.map((a) => (a.ok ? 'ok' : a.errorClass))).toEqual(['rate_limit', 'bad_request']);
    for (const a of attempts) expect(a).not.toHaveProperty('unanswered');
  });
});

describe('which socket codes show a request never left', () => {
  it('refused, unresolved, unreachable and TLS failures did not leave; a reset, a closed socket, a timeout or no code at all may have', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'])
      expect(neverDelivered(code), code).toBe(true);
    for (const code of ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ETIMEDOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ERR_HTTP2_STREAM_ERROR', undefined])
      expect(neverDelivered(code), String(code)).toBe(false);
  });
});

describe('anthropic: its own overloaded answer', () => {
  it('a 529 overloaded_error (the API turned the request away before running it): not counted', async () => {
    const server = await wire.start([{ status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }, { from: SUCCESS['anthropic']! }]);
    const { attempts } = await attemptsAgainst(await adapter('anthropic', server.url));
    expect(attempts[0]).toMatchObject({ ok: false, errorClass: 'server_error', retryable: true });
    expect(attempts[0]).not.toHaveProperty('unanswered');
  });
});

describe('bedrock: an AWS error after the request was sent', () => {
  const CREDENTIALS = { accessKeyId: 'STANDINTESTKEY00002', secretAccessKey: 'fake-secret-never-printed-0123456789' };
  const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
  const bedrock = useBedrockServer();
  async function converse(answers: BedrockAnswer[]): Promise<{ attempts: Attempt[]; final: Attempt }> {
    const server = await bedrock.start(answers);
    return attemptsAgainst(new BedrockConverseProvider({ model: MODEL, region: 'eu-west-3', endpoint: server.url, credentials: CREDENTIALS }));
  }

  it('a 504 without an AWS error type (a gateway), and a ServiceUnavailableException: both counted unanswered', async () => {
    const { attempts, final } = await converse([{ raw: 'Gateway Timeout', status: 504 }, { error: 'ServiceUnavailableException', status: 503 }, { json: converseReply('Yes.') }]);
    expect(final.ok).toBe(true);
    expect(attempts.slice(0, 2)).toMatchObject([
      { ok: false, errorClass: 'server_error', unanswered: true },
      { ok: false, errorClass: 'server_error', unanswered: true },
    ]);
  });

  it('a reply withheld by a guardrail (the model ran): priced by its usage, not counted unanswered, and not retried', async () => {
    const { attempts } = await converse([{ json: converseReply('', { inputTokens: 12, outputTokens: 0 }, 'guardrail_intervened') }]);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ ok: false, errorClass: 'content_filter', retryable: false, usage: { input_tokens: 12, output_tokens: 0 } });
    expect(attempts[0]).not.toHaveProperty('unanswered');
  });

  it('a ThrottlingException (the service refused the request): not counted', async () => {
    const { attempts } = await converse([{ error: 'ThrottlingException', status: 429 }, { json: converseReply('Yes.') }]);
    expect(attempts[0]).toMatchObject({ ok: false, errorClass: 'rate_limit' });
    expect(attempts[0]).not.toHaveProperty('unanswered');
  });

  it('a closed port: not counted', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const attempts: Attempt[] = [];
    await callWithRetry(new BedrockConverseProvider({ model: MODEL, region: 'eu-west-3', endpoint: url, credentials: CREDENTIALS }), REQ, FAST, (a) => attempts.push(a));
    expect(attempts).toHaveLength(FAST.maxAttempts);
    for (const a of attempts) {
      expect(a).toMatchObject({ ok: false, errorClass: 'connection' });
      expect(a).not.toHaveProperty('unanswered');
    }
  });
});
