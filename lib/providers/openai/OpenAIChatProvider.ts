import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { CandidateLogprobs } from '../../core/types.js';
import type { GenerateRequest, GenerateResult, ModelProvider, RetryDecision, SdkProviderOptions, TokenLogprob } from '../types.js';
import { ProviderCallError } from '../errors.js';
import type { RateLimitHints } from '../rateLimits.js';
import { classifyProviderError, sdkErrorContext } from '../sdkErrors.js';
import type { SdkErrorContext } from '../sdkErrors.js';
import { parseWire, sendForJson } from '../wire.js';
import { groupFailure } from './scoringGroup.js';
import { sdkTransport } from '../transportTimeouts.js';

/**
 * `openai` sends `max_completion_tokens` (OpenAI deprecated `max_tokens`, and its reasoning models
 * refuse it); `openai-compatible` sends `max_tokens`, which vLLM, Ollama, Together, OpenRouter and
 * the Gemini and Mistral compatibility layers all read.
 */
export type ChatFlavour = 'openai' | 'openai-compatible';

/** Where `provider: openai` goes when the campaign gives no `base_url`. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * The SDK client every OpenAI adapter uses: retries off (they live in lib/run), and an explicit
 * base URL, so OPENAI_BASE_URL in the environment cannot redirect a campaign.
 */
export function createOpenAIClient(options: {
  readonly apiKey: string;
  readonly baseURL?: string;
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}): OpenAI {
  return new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL ?? OPENAI_BASE_URL,
    maxRetries: 0,
    // The SDK's timeout and its transport's follow the attempt timeout, above it (transportTimeouts.ts).
    ...sdkTransport(options.timeoutMs, options.fetch),
  });
}

/**
 * vLLM's extensions to the chat-completions body (sent as extra body fields; the SDK passes them
 * through): the logprobs of given token ids, generation restricted to given token ids, and tokens
 * named `token_id:<id>` in the logprobs, so a candidate is matched by id, not by decoded text.
 */
export interface VllmExtraBody {
  logprob_token_ids?: number[];
  allowed_token_ids?: number[];
  return_tokens_as_token_ids?: boolean;
  /** Top-k logprobs at every prompt position; vLLM adds the prompt's own token when outside the top-k. */
  prompt_logprobs?: number;
  /** With `continue_final_message`: the template leaves a final assistant message open, so it ends the prompt. */
  add_generation_prompt?: boolean;
  continue_final_message?: boolean;
  /** Keyword arguments of the model's chat template (`enable_thinking: false` for Qwen3). */
  chat_template_kwargs?: Record<string, string | number | boolean>;
}

/** The body sent: OpenAI's chat completion, plus vLLM's extensions for an `openai-compatible` model. */
export type ChatWireBody = ChatCompletionCreateParamsNonStreaming & VllmExtraBody;

/** Top-k asked for with `allowed_token_ids` when the settings give none: the most vLLM returns by default. */
const CANDIDATE_TOP_K = 20;

/**
 * The chat-completions body for a request (Same Judgment, Different Yes "Generation settings": only the settings the
 * campaign set are sent, so the provider's own defaults stay visible as absences in `settings_sent`).
 * `candidate_logprobs` becomes vLLM's extra body fields (only on `openai-compatible`).
 * Pure: exported for tests.
 * @throws ProviderCallError `bad_request` for `candidate_logprobs` on OpenAI's API, which has no such extension.
 */
export function toWireRequest(req: GenerateRequest, model: string, flavour: ChatFlavour = 'openai'): ChatWireBody {
  const s = req.settings;
  const body: ChatWireBody = {
    model,
    messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
  };
  if (s.max_tokens !== undefined) {
    if (flavour === 'openai') body.max_completion_tokens = s.max_tokens;
    else body.max_tokens = s.max_tokens;
  }
  if (s.temperature !== undefined) body.temperature = s.temperature;
  if (s.top_p !== undefined) body.top_p = s.top_p;
  if (s.seed !== undefined) body.seed = s.seed;
  if (s.stop !== undefined && s.stop.length > 0) body.stop = [...s.stop];
  if (s.reasoning_effort !== undefined) body.reasoning_effort = s.reasoning_effort;
  // top_logprobs without logprobs is a 400 on OpenAI; a probe that asks for top-k wants logprobs.
  if (s.logprobs === true || (s.top_logprobs !== undefined && s.top_logprobs > 0)) {
    body.logprobs = true;
    if (s.top_logprobs !== undefined) body.top_logprobs = s.top_logprobs;
  }
  if (s.chat_template_kwargs !== undefined && flavour !== 'openai-compatible') {
    throw new ProviderCallError(
      `${flavour}/${model}: settings.chat_template_kwargs is a vLLM extension; use it on a provider openai-compatible model served by vLLM`,
      `${flavour}/${model}`,
      'bad_request',
      false,
    );
  }
  // Disentangling Question, Response, and Verifier Languages §3.4 "thinking disabled where a model has it": on vLLM that is the chat template's
  // switch (Qwen3: enable_thinking). OpenAI's own API has no such switch (reasoning_effort is its own setting).
  if (flavour === 'openai-compatible' && (s.thinking === 'off' || s.chat_template_kwargs !== undefined)) {
    body.chat_template_kwargs = { ...(s.thinking === 'off' ? { enable_thinking: false } : {}), ...s.chat_template_kwargs };
  }
  if (s.candidate_logprobs !== undefined) {
    if (flavour !== 'openai-compatible') {
      throw new ProviderCallError(
        `${flavour}/${model}: settings.candidate_logprobs is a vLLM extension; use it on a provider openai-compatible model served by vLLM`,
        `${flavour}/${model}`,
        'bad_request',
        false,
      );
    }
    // prompt_logprobs scores the candidates in requests of their own (toPromptLogprobsRequests);
    // the reply itself is asked for as without candidates.
    if (s.candidate_logprobs.method === 'prompt_logprobs') return body;
    const ids = Object.values(s.candidate_logprobs.tokens);
    body.logprobs = true;
    body.return_tokens_as_token_ids = true;
    if (s.candidate_logprobs.method === 'logprob_token_ids') {
      body.logprob_token_ids = ids;
    } else {
      body.allowed_token_ids = ids;
      body.top_logprobs = s.top_logprobs ?? CANDIDATE_TOP_K;
    }
  }
  return body;
}

/** The settings part of a wire body (everything but the messages), as stored on the reply. */
export function settingsSent(body: ChatWireBody): Record<string, unknown> {
  const { messages: _messages, ...rest } = body;
  return rest;
}

const tokenLogprobSchema = z.object({ token: z.string(), logprob: z.number() });

const chatCompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional(), refusal: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
        logprobs: z
          .object({
            content: z
              .array(tokenLogprobSchema.extend({ top_logprobs: z.array(tokenLogprobSchema).nullable().optional() }))
              .nullable()
              .optional(),
          })
          .nullable()
          .optional(),
      }),
    )
    .min(1),
  usage: z.object({
    prompt_tokens: z.number().int().min(0),
    completion_tokens: z.number().int().min(0),
    prompt_tokens_details: z.object({ cached_tokens: z.number().int().min(0).nullable().optional() }).nullable().optional(),
  }),
});

/**
 * The first generated token's log-probabilities: the sampled token and its top-k alternatives,
 * keyed by the token text exactly as the provider returns it (leading space included). All are
 * exact; a token outside the top-k is absent, and its logprob is only bounded by the smallest one
 * listed.
 */
function firstTokenLogprobs(
  content: readonly { token: string; logprob: number; top_logprobs?: readonly { token: string; logprob: number }[] | null }[] | null | undefined,
): Record<string, TokenLogprob> | undefined {
  const first = content?.[0];
  if (first === undefined) return undefined;
  const out: Record<string, TokenLogprob> = {};
  for (const t of [first, ...(first.top_logprobs ?? [])]) {
    const seen = out[t.token];
    if (seen === undefined || t.logprob > seen.logprob) out[t.token] = { logprob: t.logprob, exact: true };
  }
  return out;
}

const TOKEN_ID = /^token_id:(\d+)$/;

/**
 * The first token's logprobs of the campaign's candidate tokens, keyed by their surface form, from
 * a body whose tokens are named `token_id:<id>` (vLLM `return_tokens_as_token_ids`). A candidate
 * listed (the sampled token, or one of the returned alternatives: the requested ids under
 * `logprob_token_ids`, the top-k under `allowed_token_ids`) is exact. One not listed is outside the
 * top-k, so its logprob is at most the smallest one listed: that bound is stored, marked
 * `exact: false`. With no alternatives listed nothing bounds it, and it is left out.
 * Pure: exported for tests.
 */
export function candidateLogprobs(
  content: readonly { token: string; logprob: number; top_logprobs?: readonly { token: string; logprob: number }[] | null }[] | null | undefined,
  candidates: CandidateLogprobs,
): Record<string, TokenLogprob> | undefined {
  const first = content?.[0];
  if (first === undefined) return undefined;
  const byId = new Map<number, number>();
  const alternatives = first.top_logprobs ?? [];
  for (const t of [first, ...alternatives]) {
    const id = TOKEN_ID.exec(t.token)?.[1];
    if (id === undefined) continue;
    const seen = byId.get(Number(id));
    if (seen === undefined || t.logprob > seen) byId.set(Number(id), t.logprob);
  }
  const bound = alternatives.length > 0 ? Math.min(...alternatives.map((t) => t.logprob)) : undefined;
  const out: Record<string, TokenLogprob> = {};
  for (const [surface, id] of Object.entries(candidates.tokens)) {
    const logprob = byId.get(id);
    if (logprob !== undefined) out[surface] = { logprob, exact: true };
    else if (bound !== undefined) out[surface] = { logprob: bound, exact: false };
  }
  return out;
}

/**
 * Top-k asked for with `prompt_logprobs`: 1, so the last position lists the prompt's own token and at
 * most one other (the most likely), and which one the prompt holds can be told by its rank.
 */
const PROMPT_LOGPROBS_TOP_K = 1;

/** One scoring request of the `prompt_logprobs` method: a candidate and the body that scores it. */
export interface PromptLogprobsRequest {
  readonly surface: string;
  readonly id: number;
  readonly body: ChatWireBody;
}

/**
 * The scoring requests of `candidate_logprobs` with `method: prompt_logprobs`, one per candidate:
 * the conversation with the candidate as the open start of the assistant's reply
 * (`add_generation_prompt: false`, `continue_final_message: true`, so the chat template ends the
 * prompt with it) and vLLM's `prompt_logprobs`, whose last position then holds log P(candidate |
 * conversation) at the reply's first token. One token is generated, the least vLLM allows.
 * Pure: exported for tests.
 */
export function toPromptLogprobsRequests(req: GenerateRequest, model: string): PromptLogprobsRequest[] {
  const candidates = req.settings.candidate_logprobs;
  if (candidates?.method !== 'prompt_logprobs') return [];
  return Object.entries(candidates.tokens).map(([surface, id]) => ({
    surface,
    id,
    body: {
      model,
      messages: [...req.messages.map((m) => ({ role: m.role, content: m.content })), { role: 'assistant' as const, content: surface }],
      max_tokens: 1,
      prompt_logprobs: PROMPT_LOGPROBS_TOP_K,
      add_generation_prompt: false,
      continue_final_message: true,
    },
  }));
}

const promptLogprobEntrySchema = z.object({
  logprob: z.number(),
  rank: z.number().int().nullable().optional(),
  decoded_token: z.string().nullable().optional(),
});

// vLLM's ChatCompletionResponse: `prompt_logprobs` at the top level, one entry per prompt position
// (null at the first, which has no context), each keyed by token id.
const promptLogprobsResponseSchema = z.object({
  prompt_logprobs: z.array(z.record(z.string(), promptLogprobEntrySchema).nullable()).min(1),
  usage: chatCompletionSchema.shape.usage,
});

/** A candidate's exact logprob and what its scoring request used. */
export interface ScoredCandidate {
  readonly logprob: TokenLogprob;
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number };
}

/**
 * Reads a candidate's logprob from the last prompt position of a scoring reply. That position must
 * hold the candidate itself: with a top-k of 1 it lists the prompt's token and, when that is not
 * the most likely, the most likely one (rank 1) too, so the prompt's token is the one not ranked 1,
 * or the only one listed. Pure: exported for tests.
 * @throws ProviderCallError `malformed_response` when the body has no prompt_logprobs (a server
 *   that ignored the extension); `bad_request` when the prompt did not end with the candidate's id
 *   (the chat template or the tokenizer split the surface form differently), which no retry mends.
 */
export function promptLogprobOf(body: unknown, provider: string, surface: string, id: number): ScoredCandidate {
  const wire = parseWire(promptLogprobsResponseSchema, body, provider, 'chat completion with prompt_logprobs');
  const last = wire.prompt_logprobs[wire.prompt_logprobs.length - 1];
  const listed = Object.entries(last ?? {});
  const own = listed.length === 1 ? listed[0] : listed.find(([, e]) => typeof e.rank === 'number' && e.rank !== 1);
  const usage = { input_tokens: wire.usage.prompt_tokens, output_tokens: wire.usage.completion_tokens };
  if (own === undefined || Number(own[0]) !== id) {
    const ended = own ? `token ${own[0]}${own[1].decoded_token ? ` (${JSON.stringify(own[1].decoded_token)})` : ''}` : 'no listed token';
    throw new ProviderCallError(
      `${provider}: candidate ${JSON.stringify(surface)} (token ${id}) did not end the scoring prompt, ${ended} did; check candidate_logprobs.tokens against the model's tokenizer and chat template`,
      provider,
      'bad_request',
      false,
      undefined,
      undefined,
      // Answered and billed, though it scored the wrong token.
      { usage },
    );
  }
  return { logprob: { logprob: own[1].logprob, exact: true }, usage };
}

/**
 * Maps a chat-completion body to a GenerateResult. A refusal (`message.refusal`) and a
 * `content_filter` stop are permanent errors, so the analysis counts them apart from failures.
 * With `candidates` (the request's `candidate_logprobs`) the logprobs are the candidates', by
 * `candidateLogprobs`; otherwise the first token's top-k. Pure: exported for tests.
 * @throws ProviderCallError `malformed_response` when the body lacks the fields read here.
 */
export function fromWireResponse(body: unknown, provider = 'openai', candidates?: CandidateLogprobs): GenerateResult {
  const wire = parseWire(chatCompletionSchema, body, provider, 'chat completion');
  const choice = wire.choices[0]!;
  const cached = wire.usage.prompt_tokens_details?.cached_tokens;
  const usage = {
    input_tokens: wire.usage.prompt_tokens,
    output_tokens: wire.usage.completion_tokens,
    // A subset of prompt_tokens; capped so a provider that over-reports cannot price a reply below its cached cost.
    ...(typeof cached === 'number' ? { cached_input_tokens: Math.min(cached, wire.usage.prompt_tokens) } : {}),
  };
  // Answered and billed, but not a reply: the attempt is priced by the usage that came with it.
  const refusal = choice.message.refusal;
  if (typeof refusal === 'string' && refusal.length > 0) {
    throw new ProviderCallError(`${provider}: the model refused: ${refusal.slice(0, 200)}`, provider, 'refusal', false, undefined, undefined, { usage });
  }
  if (choice.finish_reason === 'content_filter') {
    throw new ProviderCallError(`${provider}: the reply was withheld by the provider's content filter`, provider, 'content_filter', false, undefined, undefined, { usage });
  }
  const logprobs = candidates ? candidateLogprobs(choice.logprobs?.content, candidates) : firstTokenLogprobs(choice.logprobs?.content);
  return {
    text: choice.message.content ?? '',
    finish_reason: choice.finish_reason ?? 'unknown',
    usage,
    ...(logprobs ? { logprobs } : {}),
  };
}

/** `baseURL` with its `/v1` (e.g. `http://localhost:8000/v1`). */
export interface OpenAIChatProviderOptions extends SdkProviderOptions {
  readonly flavour?: ChatFlavour;
}

/**
 * Chat completions through the official `openai` SDK, for OpenAI and every OpenAI-compatible
 * server. The SDK's retries are off: retries live in lib/run/callWithRetry.ts.
 */
export class OpenAIChatProvider implements ModelProvider {
  readonly id: string;
  readonly simulated = false;
  readonly endpoint: string;
  readonly #client: OpenAI;
  readonly #errors: SdkErrorContext & { readonly endpoint: string };
  readonly #model: string;
  readonly #flavour: ChatFlavour;
  readonly #onHints: ((hints: RateLimitHints) => void) | undefined;

  constructor(options: OpenAIChatProviderOptions) {
    this.#flavour = options.flavour ?? 'openai';
    this.#model = options.model;
    this.id = `${this.#flavour}/${options.model}`;
    this.#errors = sdkErrorContext(this.id, OpenAI, options, OPENAI_BASE_URL);
    this.endpoint = this.#errors.endpoint;
    this.#onHints = options.onRateLimitHints;
    this.#client = createOpenAIClient(options);
  }

  async generate(req: GenerateRequest, signal?: AbortSignal): Promise<GenerateResult> {
    const body = toWireRequest(req, this.#model, this.#flavour);
    const send = (b: ChatWireBody): Promise<unknown> =>
      sendForJson(() => this.#client.chat.completions.create(b, signal ? { signal } : {}).asResponse(), this.#errors, this.#onHints);
    const candidates = req.settings.candidate_logprobs;
    if (candidates?.method !== 'prompt_logprobs')
      return { ...fromWireResponse(await send(body), this.id, candidates), settings_sent: settingsSent(body) };

    // toWireRequest refused this off vLLM already. The reply and the scoring requests go out
    // together; any failure fails the call, since a reply missing a candidate is not what was asked.
    // Each request is waited for, so that the failure counts what the answered ones were billed.
    const scoring = toPromptLogprobsRequests(req, this.#model);
    const settled = await Promise.allSettled([
      send(body).then((json) => fromWireResponse(json, this.id)),
      ...scoring.map((s) => send(s.body).then((json) => promptLogprobOf(json, this.id, s.surface, s.id))),
    ]);
    const failure = groupFailure(settled, this.id);
    if (failure !== undefined) throw failure;
    const [reply, ...scored] = settled.map((s) => (s as PromiseFulfilledResult<GenerateResult | ScoredCandidate>).value) as [GenerateResult, ...ScoredCandidate[]];
    const logprobs: Record<string, TokenLogprob> = {};
    scoring.forEach((s, i) => (logprobs[s.surface] = scored[i]!.logprob));
    return {
      ...reply,
      // Every request is paid for: the reply's usage plus the scoring requests'.
      usage: {
        ...reply.usage,
        input_tokens: reply.usage.input_tokens + scored.reduce((n, c) => n + c.usage.input_tokens, 0),
        output_tokens: reply.usage.output_tokens + scored.reduce((n, c) => n + c.usage.output_tokens, 0),
      },
      logprobs,
      settings_sent: { ...settingsSent(body), candidate_scoring: { ...settingsSent(scoring[0]!.body), requests: scoring.length } },
    };
  }

  classifyError(err: unknown): RetryDecision {
    return classifyProviderError(err);
  }
}
