import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages/messages';
import { z } from 'zod';
import type { GenerateRequest, GenerateResult, ModelProvider, RetryDecision, SdkProviderOptions } from '../types.js';
import { ProviderCallError } from '../errors.js';
import type { RateLimitHints } from '../rateLimits.js';
import { classifyProviderError, sdkErrorContext } from '../sdkErrors.js';
import type { SdkErrorContext } from '../sdkErrors.js';
import { parseWire, sendForJson } from '../wire.js';
import { sdkTransport } from '../transportTimeouts.js';

/**
 * The Messages API requires `max_tokens`; a campaign always resolves one (DEFAULT_GENERATION_SETTINGS),
 * this covers a request built without the campaign defaults.
 */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 256;

/** The API's base URL, without the `/v1` the SDK adds. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/**
 * The Messages body. `temperature` and `top_p` left the SDK's types (1.x marks them deprecated for
 * new models), but the API still takes them on the models that accept sampling settings, and a
 * measurement must send what the campaign asked for or fail visibly (a 400, recorded).
 */
export type MessagesWireRequest = MessageCreateParamsNonStreaming & { temperature?: number; top_p?: number };

/**
 * The Messages body for a request. System messages become the top-level `system` text (the API
 * has no system role); `thinking: off` is sent as `{ type: 'disabled' }` and a budget as
 * `{ type: 'enabled', budget_tokens }`, so the stored settings say which one the model ran with
 * (Same Judgment, Different Yes "Generation settings"). `seed`, `logprobs` and `reasoning_effort` have no Messages
 * counterpart and are not sent. Pure: exported for tests.
 * @throws ProviderCallError `bad_request` when a thinking budget is not below `max_tokens` (the API's rule),
 *   or for `candidate_logprobs` (a vLLM extension the Messages API has no counterpart for).
 */
export function toWireRequest(req: GenerateRequest, model: string): MessagesWireRequest {
  const s = req.settings;
  if (s.candidate_logprobs !== undefined) {
    throw new ProviderCallError(
      `anthropic/${model}: settings.candidate_logprobs is a vLLM extension; use it on a provider openai-compatible model served by vLLM`,
      `anthropic/${model}`,
      'bad_request',
      false,
    );
  }
  const system = req.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const body: MessagesWireRequest = {
    model,
    max_tokens: s.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages: req.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
  };
  if (system.length > 0) body.system = system.join('\n\n');
  if (s.temperature !== undefined) body.temperature = s.temperature;
  if (s.top_p !== undefined) body.top_p = s.top_p;
  if (s.stop !== undefined && s.stop.length > 0) body.stop_sequences = [...s.stop];
  if (s.thinking === 'off') body.thinking = { type: 'disabled' };
  else if (s.thinking !== undefined) {
    if (s.thinking.budget_tokens >= body.max_tokens) {
      throw new ProviderCallError(
        `anthropic/${model}: thinking.budget_tokens (${s.thinking.budget_tokens}) must be below max_tokens (${body.max_tokens}); raise max_tokens or lower the budget`,
        `anthropic/${model}`,
        'bad_request',
        false,
      );
    }
    body.thinking = { type: 'enabled', budget_tokens: s.thinking.budget_tokens };
  }
  return body;
}

/** The settings part of a wire body (everything but the system text and messages), as stored on the reply. */
export function settingsSent(body: MessagesWireRequest): Record<string, unknown> {
  const { messages: _messages, system: _system, ...rest } = body;
  return rest;
}

const messageSchema = z.object({
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  stop_reason: z.string().nullable().optional(),
  usage: z.object({
    input_tokens: z.number().int().min(0),
    output_tokens: z.number().int().min(0),
    cache_creation_input_tokens: z.number().int().min(0).nullable().optional(),
    cache_read_input_tokens: z.number().int().min(0).nullable().optional(),
  }),
});

/**
 * Maps a Messages body to a GenerateResult: the text blocks joined (thinking blocks are not the
 * reply). `input_tokens` counts every prompt token, cache reads and writes included (the API
 * reports those apart), so the cost is never undercounted. A `refusal` stop is a permanent error.
 * Pure: exported for tests.
 * @throws ProviderCallError `malformed_response` when the body lacks the fields read here.
 */
export function fromWireResponse(body: unknown, provider = 'anthropic'): GenerateResult {
  const wire = parseWire(messageSchema, body, provider, 'message');
  const text = wire.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('');
  const u = wire.usage;
  const usage = {
    input_tokens: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
    output_tokens: u.output_tokens,
    // Cache reads are the cheap part; cache writes stay at the input price (a 1.25x write
    // premium is not modelled: sondage sets no cache breakpoints, so it writes none).
    ...(typeof u.cache_read_input_tokens === 'number' ? { cached_input_tokens: u.cache_read_input_tokens } : {}),
  };
  if (wire.stop_reason === 'refusal') {
    // Answered and billed, but not a reply: the attempt is priced by the usage that came with it.
    throw new ProviderCallError(`${provider}: the model refused${text ? `: ${text.slice(0, 200)}` : ''}`, provider, 'refusal', false, undefined, undefined, { usage });
  }
  return { text, finish_reason: wire.stop_reason ?? 'unknown', usage };
}

/** `baseURL` without the `/v1` suffix (the SDK adds it). */
export type AnthropicMessagesProviderOptions = SdkProviderOptions;

/**
 * Messages through the official `@anthropic-ai/sdk`. The SDK's retries are off: retries live in
 * lib/run/callWithRetry.ts.
 */
export class AnthropicMessagesProvider implements ModelProvider {
  readonly id: string;
  readonly simulated = false;
  readonly endpoint: string;
  readonly #client: Anthropic;
  readonly #errors: SdkErrorContext & { readonly endpoint: string };
  readonly #model: string;
  readonly #onHints: ((hints: RateLimitHints) => void) | undefined;

  constructor(options: AnthropicMessagesProviderOptions) {
    this.#model = options.model;
    this.id = `anthropic/${options.model}`;
    this.#errors = sdkErrorContext(this.id, Anthropic, options, ANTHROPIC_BASE_URL);
    this.endpoint = this.#errors.endpoint;
    this.#onHints = options.onRateLimitHints;
    this.#client = new Anthropic({
      apiKey: options.apiKey,
      // An explicit URL keeps ANTHROPIC_BASE_URL in the environment from redirecting a campaign.
      baseURL: options.baseURL ?? ANTHROPIC_BASE_URL,
      maxRetries: 0,
      // The SDK's timeout and its transport's follow the attempt timeout, above it (transportTimeouts.ts).
      ...sdkTransport(options.timeoutMs, options.fetch),
    });
  }

  async generate(req: GenerateRequest, signal?: AbortSignal): Promise<GenerateResult> {
    const body = toWireRequest(req, this.#model);
    const json = await sendForJson(() => this.#client.messages.create(body, signal ? { signal } : {}).asResponse(), this.#errors, this.#onHints);
    return { ...fromWireResponse(json, this.id), settings_sent: settingsSent(body) };
  }

  classifyError(err: unknown): RetryDecision {
    return classifyProviderError(err);
  }
}
