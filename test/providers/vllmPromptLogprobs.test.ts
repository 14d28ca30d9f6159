import { describe, expect, it } from 'vitest';
import { generationSettingsSchema } from '../../lib/battery/schemas.js';
import { promptLogprobOf, toPromptLogprobsRequests, toWireRequest } from '../../lib/providers/openai/OpenAIChatProvider.js';
import { createProvider } from '../../lib/providers/registry.js';
import { callWithRetry, type Attempt } from '../../lib/run/callWithRetry.js';
import type { GenerateRequest } from '../../lib/providers/types.js';
import { useWireServer, type RecordedRequest } from './helpers/wireServer.js';

const YES = 7414;
const NO = 2360;
const TOKENS = { ' Yes': YES, ' No': NO };
const QUESTION = 'Was what Finn did wrong? Answer yes or no.';

const request: GenerateRequest = {
  messages: [{ role: 'user', content: QUESTION }],
  settings: { max_tokens: 8, temperature: 1, candidate_logprobs: { tokens: TOKENS, method: 'prompt_logprobs' } },
};

/** A vLLM chat completion as it comes back with `prompt_logprobs` (entries keyed by token id). */
function scoringReply(last: Record<string, { logprob: number; rank: number; decoded_token: string }>, promptTokens = 32) {
  return {
    id: 'chatcmpl-vllm-2',
    object: 'chat.completion',
    created: 1_764_489_600,
    model: 'qwen3-8b',
    choices: [{ index: 0, message: { role: 'assistant', content: '.' }, logprobs: null, finish_reason: 'length', stop_reason: null }],
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens + 1, completion_tokens: 1, prompt_tokens_details: null },
    prompt_logprobs: [null, { '791': { logprob: -3.1, rank: 4, decoded_token: 'Was' } }, last],
  };
}

const generated = {
  id: 'chatcmpl-vllm-1',
  object: 'chat.completion',
  created: 1_764_489_600,
  model: 'qwen3-8b',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Yes, it was wrong.' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 31, total_tokens: 38, completion_tokens: 7, prompt_tokens_details: null },
  prompt_logprobs: null,
};

/** Answers like vLLM: the generation request, or a scoring request by the candidate it ends with. */
function answer(req: RecordedRequest) {
  const body = req.body as { messages: { role: string; content: string }[]; prompt_logprobs?: number };
  if (body.prompt_logprobs === undefined) return { json: generated };
  const last = body.messages[body.messages.length - 1]!;
  // " Yes" is the most likely first token (rank 1, listed alone); " No" ranks 2, listed with the top-1.
  if (last.content === ' Yes') return { json: scoringReply({ [YES]: { logprob: -0.12, rank: 1, decoded_token: ' Yes' } }) };
  return {
    json: scoringReply({
      [YES]: { logprob: -0.12, rank: 1, decoded_token: ' Yes' },
      [NO]: { logprob: -2.25, rank: 2, decoded_token: ' No' },
    }),
  };
}

const wire = useWireServer();

describe('vLLM candidate logprobs by prompt_logprobs', () => {
  it('scores each candidate in a request of its own and stores the logprobs as exact', async () => {
    const server = await wire.start([{ from: answer }]);
    const p = await createProvider({ id: 'q', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1` }, { seed: 1, env: {} });

    const r = await p.generate(request);

    expect(server.requests).toHaveLength(3);
    const bodies = server.requests.map((q) => q.body as Record<string, unknown>);
    const reply = bodies.find((b) => b.prompt_logprobs === undefined);
    expect(reply).toEqual({ model: 'qwen3-8b', messages: [{ role: 'user', content: QUESTION }], max_tokens: 8, temperature: 1 });
    const scoring = bodies.filter((b) => b.prompt_logprobs !== undefined);
    expect(scoring.map((b) => (b.messages as { content: string }[]).at(-1)).sort((a, b) => a!.content.localeCompare(b!.content))).toEqual([
      { role: 'assistant', content: ' No' },
      { role: 'assistant', content: ' Yes' },
    ]);
    for (const b of scoring)
      expect(b).toMatchObject({ max_tokens: 1, prompt_logprobs: 1, add_generation_prompt: false, continue_final_message: true });

    expect(r.text).toBe('Yes, it was wrong.');
    expect(r.logprobs).toEqual({ ' Yes': { logprob: -0.12, exact: true }, ' No': { logprob: -2.25, exact: true } });
    expect(r.usage).toEqual({ input_tokens: 31 + 32 + 32, output_tokens: 7 + 1 + 1 });
    expect(r.settings_sent).toMatchObject({ max_tokens: 8, candidate_scoring: { prompt_logprobs: 1, continue_final_message: true, requests: 2 } });
  });

  it('fails the call, not retryably, when a candidate did not end the scoring prompt', async () => {
    // The template stripped the leading space: the prompt ended with "No" (id 2822), listed with the top-1.
    const split = scoringReply({
      [YES]: { logprob: -0.12, rank: 1, decoded_token: ' Yes' },
      '2822': { logprob: -5.5, rank: 9, decoded_token: 'No' },
    });
    const server = await wire.start([{ from: (req) => ((req.body as { prompt_logprobs?: number }).prompt_logprobs === undefined ? { json: generated } : { json: split }) }]);
    const p = await createProvider({ id: 'q', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1` }, { seed: 1, env: {} });

    await expect(p.generate(request)).rejects.toThrow(
      expect.objectContaining({ errorClass: 'bad_request', retryable: false, message: expect.stringContaining('did not end the scoring prompt, token 2822 ("No") did') }),
    );
  });

  // The reply and its scoring requests run together: when one fails, the others were answered and
  // billed all the same, and the failed attempt is priced by what they used (or possibly billed).
  it.each([
    ['a 400 that counts nothing', { status: 400, json: { error: { message: 'prompt too long', type: 'BadRequestError', code: 400 } } }, 'bad_request', false],
    ['a 429', { status: 429, json: { error: { message: 'busy', type: 'RateLimitError', code: 429 } } }, 'rate_limit', false],
    ['a gateway 504 (delivered, possibly billed)', { status: 504, headers: { 'content-type': 'text/html' }, raw: '<html>504 Gateway Time-out</html>' }, 'server_error', true],
  ] as const)('one scoring request fails with %s: the answered reply and scoring request are counted on the failed attempt', async (_what, failure, errorClass, possiblyBilled) => {
    const server = await wire.start([
      {
        from: (req) => {
          const body = req.body as { messages: { content: string }[]; prompt_logprobs?: number };
          if (body.prompt_logprobs !== undefined && body.messages.at(-1)!.content === ' No') return failure;
          return answer(req);
        },
      },
    ]);
    const p = await createProvider({ id: 'q', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1` }, { seed: 1, env: {} });
    const attempts: Attempt[] = [];

    const final = await callWithRetry(p, request, { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, timeoutMs: 10_000 }, (a) => attempts.push(a));

    expect(server.requests).toHaveLength(3);
    expect(attempts).toHaveLength(1);
    expect(final.ok).toBe(false);
    if (final.ok) return;
    expect(final.errorClass).toBe(errorClass);
    // The reply (31 + 7 tokens) and the " Yes" scoring request (32 + 1): run and billed.
    expect(final.usage).toEqual({ input_tokens: 31 + 32, output_tokens: 7 + 1 });
    expect(final.unanswered === true).toBe(possiblyBilled);
    expect(final.message).toContain("2 of the call's 3 requests were answered and are billed");
  });

  it('a candidate that did not end its scoring prompt was still answered: its usage goes with the error', async () => {
    const split = scoringReply({ [YES]: { logprob: -0.12, rank: 1, decoded_token: ' Yes' }, '2822': { logprob: -5.5, rank: 9, decoded_token: 'No' } }, 30);
    expect(() => promptLogprobOf(split, 'vllm', ' No', NO)).toThrow(expect.objectContaining({ errorClass: 'bad_request', usage: { input_tokens: 30, output_tokens: 1 } }));
  });

  it('reads the prompt token by rank, and refuses a reply without prompt_logprobs', () => {
    const both = scoringReply({ [YES]: { logprob: -0.12, rank: 1, decoded_token: ' Yes' }, [NO]: { logprob: -2.25, rank: 2, decoded_token: ' No' } });
    expect(promptLogprobOf(both, 'vllm', ' No', NO).logprob).toEqual({ logprob: -2.25, exact: true });
    // The top-1 is listed, but the prompt ended with " No": scoring " Yes" from it would be wrong.
    expect(() => promptLogprobOf(both, 'vllm', ' Yes', YES)).toThrow(/did not end the scoring prompt, token 2360/);
    expect(() => promptLogprobOf({ ...both, prompt_logprobs: null }, 'vllm', ' No', NO)).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
  });

  it('leaves the reply request free of candidate fields, and builds nothing for the other methods', () => {
    expect(toWireRequest(request, 'qwen3-8b', 'openai-compatible')).toEqual({
      model: 'qwen3-8b',
      messages: [{ role: 'user', content: QUESTION }],
      max_tokens: 8,
      temperature: 1,
    });
    expect(toPromptLogprobsRequests({ ...request, settings: { candidate_logprobs: { tokens: TOKENS, method: 'logprob_token_ids' } } }, 'm')).toEqual([]);
    expect(() => toWireRequest(request, 'gpt-4.1-mini', 'openai')).toThrow(expect.objectContaining({ errorClass: 'bad_request' }));
  });

  it('the campaign file takes method prompt_logprobs', () => {
    expect(generationSettingsSchema.parse({ candidate_logprobs: { tokens: TOKENS, method: 'prompt_logprobs' } })).toEqual({
      candidate_logprobs: { tokens: TOKENS, method: 'prompt_logprobs' },
    });
  });
});
