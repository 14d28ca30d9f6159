import { describe, expect, it } from 'vitest';
import { BedrockConverseProvider } from '../../lib/providers/bedrock/BedrockConverseProvider.js';
import { toWireRequest } from '../../lib/providers/bedrock/converseWire.js';
import type { ProviderCallError } from '../../lib/providers/errors.js';
import { createProvider } from '../../lib/providers/registry.js';
import type { GenerateRequest } from '../../lib/providers/types.js';
import { callWithRetry } from '../../lib/run/callWithRetry.js';
import type { Attempt } from '../../lib/run/callWithRetry.js';
import { CampaignFileError } from '../../lib/errors.js';
import { converseReply, useBedrockServer } from '../helpers/bedrockServer.js';
import type { BedrockAnswer } from '../helpers/bedrockServer.js';
import { callFailure } from './helpers/callFailure.js';

const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
// Fake static credentials: the SDK signs with them; the secret must never reach a message.
const CREDENTIALS = { accessKeyId: 'STANDINTESTKEY00001', secretAccessKey: 'fake-secret-never-printed-0123456789' };
const FAST = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 5_000 };
const REQ: GenerateRequest = {
  messages: [
    { role: 'system', content: 'Answer in one word.' },
    { role: 'user', content: 'Is it wrong to lie?' },
  ],
  settings: { max_tokens: 16, temperature: 0, top_p: 0.9, stop: ['\n'], seed: 7 },
};

const bedrock = useBedrockServer();

async function provider(answers: BedrockAnswer[]): Promise<BedrockConverseProvider> {
  const server = await bedrock.start(answers);
  return new BedrockConverseProvider({ model: MODEL, region: 'eu-west-3', endpoint: server.url, credentials: CREDENTIALS });
}

const failure = (p: BedrockConverseProvider): Promise<ProviderCallError> => callFailure(p, REQ);

describe('Bedrock Converse through the AWS SDK, against a wire-format stand-in', () => {
  it('sends the Converse body the SDK signs for the region, and maps text, stop reason and usage', async () => {
    // Prepare
    const p = await provider([{ json: converseReply('No.', { inputTokens: 21, outputTokens: 2 }) }]);

    // Act
    const result = await p.generate(REQ);

    // Assess: the path carries the model id; system messages travel apart; only the set settings are sent (no seed: Converse has none).
    const sent = bedrock.current.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe(`/model/${MODEL}/converse`);
    expect(sent.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Is it wrong to lie?' }] }],
      system: [{ text: 'Answer in one word.' }],
      inferenceConfig: { maxTokens: 16, temperature: 0, topP: 0.9, stopSequences: ['\n'] },
    });
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=STANDINTESTKEY00001\/\d{8}\/eu-west-3\/bedrock\/aws4_request/);
    expect(result).toEqual({
      text: 'No.',
      finish_reason: 'end_turn',
      usage: { input_tokens: 21, output_tokens: 2 },
      settings_sent: { inferenceConfig: { maxTokens: 16, temperature: 0, topP: 0.9, stopSequences: ['\n'] } },
    });
    expect(p.id).toBe(`bedrock/${MODEL}`);
  });

  it('counts cache reads and writes into input tokens, so a reply is never priced below its cost', async () => {
    const p = await provider([{ json: { ...converseReply('x'), usage: { inputTokens: 5, outputTokens: 1, totalTokens: 26, cacheReadInputTokens: 15, cacheWriteInputTokens: 5 } } }]);
    expect((await p.generate(REQ)).usage).toEqual({ input_tokens: 25, output_tokens: 1, cached_input_tokens: 15 });
  });

  it('ThrottlingException is a retryable rate_limit, and callWithRetry retries it through to a success', async () => {
    const p = await provider([
      { error: 'ThrottlingException', status: 429, message: 'Too many requests, please wait before trying again.' },
      { error: 'ServiceUnavailableException', status: 503, message: 'Service unavailable' },
      { json: converseReply('Yes.') },
    ]);
    const attempts: Attempt[] = [];
    const final = await callWithRetry(p, REQ, FAST, (a) => attempts.push(a));
    expect(final.ok).toBe(true);
    expect(attempts.map((a) => (a.ok ? 'ok' : a.errorClass))).toEqual(['rate_limit', 'server_error', 'ok']);
    expect(bedrock.current.requests).toHaveLength(3);
  });

  it('ValidationException is a permanent bad_request: one attempt, no retry', async () => {
    const p = await provider([{ error: 'ValidationException', status: 400, message: 'The provided model identifier is invalid.' }]);
    const err = await failure(p);
    expect(err).toMatchObject({ errorClass: 'bad_request', retryable: false, status: 400 });
    expect(err.message).toContain('ValidationException');
    expect(p.classifyError(err)).toEqual({ retry: false, errorClass: 'bad_request' });
    const attempts: Attempt[] = [];
    await callWithRetry(p, REQ, FAST, (a) => attempts.push(a));
    expect(attempts).toHaveLength(1);
  });

  it('ModelNotReadyException (a model still loading) is retried as transient', async () => {
    const p = await provider([{ error: 'ModelNotReadyException', status: 429, message: 'Model is not ready for inference.' }]);
    const err = await failure(p);
    expect(err).toMatchObject({ errorClass: 'server_error', retryable: true });
    expect(p.classifyError(err)).toEqual({ retry: true, kind: 'transient', errorClass: 'server_error' });
  });

  it.each([
    ['AccessDeniedException', 403, 'permission', false],
    ['ResourceNotFoundException', 404, 'not_found', false],
    ['UnrecognizedClientException', 403, 'auth', false],
    ['InternalServerException', 500, 'server_error', true],
    ['ModelTimeoutException', 408, 'timeout', true],
  ] as const)('%s (HTTP %i) is %s, retryable %s', async (type, status, errorClass, retryable) => {
    const p = await provider([{ error: type, status }]);
    expect(await failure(p)).toMatchObject({ errorClass, retryable });
  });

  it('a body that does not parse is a retryable malformed_response; a body of the wrong shape too', async () => {
    const p = await provider([{ raw: '{"output": {"mess' }, { json: { output: {} } }]);
    expect(await failure(p)).toMatchObject({ errorClass: 'malformed_response', retryable: true });
    expect(await failure(p)).toMatchObject({ errorClass: 'malformed_response', retryable: true });
  });

  it('a content_filtered or guardrail stop is a permanent content_filter, counted apart from failures', async () => {
    const p = await provider([{ json: converseReply('', undefined, 'content_filtered') }, { json: converseReply('', undefined, 'guardrail_intervened') }]);
    expect(await failure(p)).toMatchObject({ errorClass: 'content_filter', retryable: false });
    expect(await failure(p)).toMatchObject({ errorClass: 'content_filter', retryable: false });
  });

  it('nothing listening is a retryable connection error naming the endpoint', async () => {
    const stopped = await bedrock.start();
    const url = stopped.url;
    await stopped.close();
    const p = new BedrockConverseProvider({ model: MODEL, region: 'us-east-1', endpoint: url, credentials: CREDENTIALS });
    const err = await failure(p);
    expect(err).toMatchObject({ errorClass: 'connection', retryable: true });
    expect(err.message).toContain(url);
  });

  it('never puts the secret key in a message or the kept cause', async () => {
    const p = await provider([{ error: 'ValidationException', status: 400, message: `echoed ${CREDENTIALS.secretAccessKey}` }]);
    const err = await failure(p);
    expect(err.message).not.toContain(CREDENTIALS.secretAccessKey);
    expect(JSON.stringify(err.cause, Object.getOwnPropertyNames(err.cause as object))).not.toContain(CREDENTIALS.secretAccessKey);
  });

  it('refuses logprobs, a thinking budget and vLLM extensions before any call: Converse cannot carry them', () => {
    for (const settings of [{ logprobs: true }, { top_logprobs: 5 }, { thinking: { budget_tokens: 100 } }, { chat_template_kwargs: { enable_thinking: false } }]) {
      expect(() => toWireRequest({ messages: REQ.messages, settings }, 'bedrock/m')).toThrow(/cannot be sent through Bedrock Converse/);
    }
    expect(toWireRequest({ messages: REQ.messages, settings: { thinking: 'off', logprobs: false } }, 'bedrock/m').inferenceConfig).toBeUndefined();
  });
});

describe('the registry builds provider bedrock lazily', () => {
  it('takes the region from the entry, else AWS_REGION, and refuses an entry with neither', async () => {
    const fromEntry = await createProvider({ id: 'b', provider: 'bedrock', model: MODEL, region: 'ap-south-1' }, { seed: 1, env: {} });
    expect(fromEntry.endpoint).toBe('https://bedrock-runtime.ap-south-1.amazonaws.com');
    const fromEnv = await createProvider({ id: 'b', provider: 'bedrock', model: MODEL }, { seed: 1, env: { AWS_REGION: 'us-west-2' } });
    expect(fromEnv.endpoint).toBe('https://bedrock-runtime.us-west-2.amazonaws.com');
    await expect(createProvider({ id: 'b', provider: 'bedrock', model: MODEL }, { seed: 1, file: 'c.yaml', env: {} })).rejects.toThrow(CampaignFileError);
    await expect(createProvider({ id: 'b', provider: 'bedrock', model: MODEL }, { seed: 1, file: 'c.yaml', env: {} })).rejects.toThrow(/c\.yaml.*models\[b\]\.region.*needs an AWS region/s);
  });
});
