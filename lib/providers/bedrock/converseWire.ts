/**
 * Amazon Bedrock's Converse API on the wire: the request body sondage sends and the response body
 * it reads, pure, so that the synchronous adapter and batch inference (whose `Converse` records
 * carry the same bodies) share one mapping.
 */
import { z } from 'zod';
import type { GenerateRequest, GenerateResult } from '../types.js';
import { ProviderCallError } from '../errors.js';
import { parseWire } from '../wire.js';

/** The Converse body (without `modelId`, which travels in the path or the job). */
export interface ConverseWireRequest {
  messages: { role: 'user' | 'assistant'; content: { text: string }[] }[];
  system?: { text: string }[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
}

/**
 * Settings Converse has no field for that would change what is measured: sent nowhere, they would
 * pass unnoticed, so a request that carries one is refused (bad_request) rather than answered
 * without it. `seed` is left out silently, as on the Anthropic adapter: Converse has no seed, and
 * the stored `settings_sent` shows that none was sent.
 */
const REFUSED: readonly { key: 'logprobs' | 'top_logprobs' | 'candidate_logprobs' | 'reasoning_effort' | 'chat_template_kwargs'; why: string }[] = [
  { key: 'logprobs', why: 'Converse returns no token log-probabilities' },
  { key: 'top_logprobs', why: 'Converse returns no token log-probabilities' },
  { key: 'candidate_logprobs', why: 'it is a vLLM extension' },
  { key: 'reasoning_effort', why: 'Converse has no such field' },
  { key: 'chat_template_kwargs', why: 'it is a vLLM extension' },
];

/**
 * The Converse body for a request: system messages become the top-level `system` blocks (Converse
 * has no system role), the others text blocks; only the settings the campaign set are sent (Same
 * Judgment, Different Yes "Generation settings"), so the model's own defaults stay visible as
 * absences in `settings_sent`. `thinking: off` sends nothing: Converse's default is no extended
 * reasoning. Pure: exported for tests.
 * @throws ProviderCallError `bad_request` for a setting Converse cannot carry (logprobs, a thinking
 *   budget, vLLM extensions), naming it.
 */
export function toWireRequest(req: GenerateRequest, provider: string): ConverseWireRequest {
  const s = req.settings;
  const refuse = (setting: string, why: string): never => {
    throw new ProviderCallError(`${provider}: settings.${setting} cannot be sent through Bedrock Converse (${why}); remove it for this model`, provider, 'bad_request', false);
  };
  for (const { key, why } of REFUSED) {
    const v = s[key];
    if (v !== undefined && v !== false && !(key === 'top_logprobs' && v === 0)) refuse(key, why);
  }
  if (s.thinking !== undefined && s.thinking !== 'off') refuse('thinking.budget_tokens', 'model-specific fields are not sent; use provider anthropic for extended thinking');
  const system = req.messages.filter((m) => m.role === 'system').map((m) => ({ text: m.content }));
  const body: ConverseWireRequest = {
    messages: req.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role as 'user' | 'assistant', content: [{ text: m.content }] })),
  };
  if (system.length > 0) body.system = system;
  const config: NonNullable<ConverseWireRequest['inferenceConfig']> = {};
  if (s.max_tokens !== undefined) config.maxTokens = s.max_tokens;
  if (s.temperature !== undefined) config.temperature = s.temperature;
  if (s.top_p !== undefined) config.topP = s.top_p;
  if (s.stop !== undefined && s.stop.length > 0) config.stopSequences = [...s.stop];
  if (Object.keys(config).length > 0) body.inferenceConfig = config;
  return body;
}

/** The settings part of a Converse body (its `inferenceConfig`), as stored on the reply. */
export function settingsSent(body: ConverseWireRequest): Record<string, unknown> {
  return body.inferenceConfig === undefined ? {} : { inferenceConfig: { ...body.inferenceConfig } };
}

const converseResponseSchema = z.object({
  output: z.object({
    message: z.object({ content: z.array(z.looseObject({ text: z.string().optional() })) }),
  }),
  stopReason: z.string().nullable().optional(),
  usage: z.object({
    inputTokens: z.number().int().min(0),
    outputTokens: z.number().int().min(0),
    cacheReadInputTokens: z.number().int().min(0).nullable().optional(),
    cacheWriteInputTokens: z.number().int().min(0).nullable().optional(),
  }),
});

/**
 * Maps a Converse response body (the SDK's parsed output, or a batch record's `modelOutput`) to a
 * GenerateResult: the text blocks joined (reasoning blocks are not the reply). `inputTokens` is
 * counted with the cache reads and writes Converse reports apart, so a reply is never priced below
 * what it cost. A `content_filtered` or `guardrail_intervened` stop is a permanent
 * `content_filter` error, counted apart from failures. Pure: exported for tests.
 * @throws ProviderCallError `malformed_response` (retryable) when the body lacks the fields read here.
 */
export function fromWireResponse(body: unknown, provider: string): GenerateResult {
  const wire = parseWire(converseResponseSchema, body, provider, 'Converse response');
  const text = wire.output.message.content.map((b) => b.text ?? '').join('');
  const u = wire.usage;
  const usage = {
    input_tokens: u.inputTokens + (u.cacheReadInputTokens ?? 0) + (u.cacheWriteInputTokens ?? 0),
    output_tokens: u.outputTokens,
    ...(typeof u.cacheReadInputTokens === 'number' ? { cached_input_tokens: u.cacheReadInputTokens } : {}),
  };
  if (wire.stopReason === 'content_filtered' || wire.stopReason === 'guardrail_intervened') {
    // Answered and billed, but not a reply: the attempt is priced by the usage that came with it.
    throw new ProviderCallError(`${provider}: the reply was withheld by Bedrock (${wire.stopReason})`, provider, 'content_filter', false, undefined, undefined, { usage });
  }
  return { text, finish_reason: wire.stopReason ?? 'unknown', usage };
}
