import { describe, expect, it } from 'vitest';
import { generationSettingsSchema } from '../../lib/battery/schemas.js';
import type { Far6Item } from '../../lib/batteries/far6/types.js';
import { toWireRequest as toAnthropicWireRequest } from '../../lib/providers/anthropic/AnthropicMessagesProvider.js';
import { candidateLogprobs, toWireRequest } from '../../lib/providers/openai/OpenAIChatProvider.js';
import { createProvider } from '../../lib/providers/registry.js';
import type { GenerateRequest } from '../../lib/providers/types.js';
import { replyRow } from '../../lib/run/replyRow.js';
import { useWireServer, type WireReply } from './helpers/wireServer.js';

const YES = 7414;
const NO = 2360;
const TOKENS = { ' Yes': YES, ' No': NO };

/** A vLLM chat completion of one token, its logprobs named `token_id:<id>` (return_tokens_as_token_ids). */
function vllmReply(sampled: number, sampledLogprob: number, top: readonly [number, number][]) {
  return {
    id: 'chatcmpl-vllm-1',
    object: 'chat.completion',
    created: 1_764_489_600,
    model: 'qwen3-8b',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: sampled === YES ? ' Yes' : ' No', tool_calls: [], reasoning_content: null },
        logprobs: {
          content: [
            {
              token: `token_id:${sampled}`,
              logprob: sampledLogprob,
              bytes: null,
              top_logprobs: top.map(([id, logprob]) => ({ token: `token_id:${id}`, logprob, bytes: null })),
            },
          ],
        },
        finish_reason: 'length',
        stop_reason: null,
      },
    ],
    usage: { prompt_tokens: 31, total_tokens: 32, completion_tokens: 1, prompt_tokens_details: null },
    prompt_logprobs: null,
  };
}

const request = (method: 'logprob_token_ids' | 'allowed_token_ids', top_logprobs?: number): GenerateRequest => ({
  messages: [{ role: 'user', content: 'Was what Finn did wrong? Answer yes or no.' }],
  settings: { max_tokens: 1, temperature: 0, ...(top_logprobs !== undefined ? { top_logprobs } : {}), candidate_logprobs: { tokens: TOKENS, method } },
});

const wire = useWireServer();

async function vllm(script: readonly WireReply[]) {
  const server = await wire.start(script);
  return createProvider({ id: 'q', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1` }, { seed: 1, env: {} });
}

describe('vLLM candidate-token logprobs (openai-compatible)', () => {
  it('logprob_token_ids: sends the candidate ids as extra body fields and stores every candidate as exact', async () => {
    const p = await vllm([{ json: vllmReply(YES, -0.105, [[YES, -0.105], [NO, -2.354]]) }]);

    const r = await p.generate(request('logprob_token_ids'));

    expect(wire.current.requests[0]!.body).toEqual({
      model: 'qwen3-8b',
      messages: [{ role: 'user', content: 'Was what Finn did wrong? Answer yes or no.' }],
      max_tokens: 1,
      temperature: 0,
      logprobs: true,
      return_tokens_as_token_ids: true,
      logprob_token_ids: [YES, NO],
    });
    expect(r.logprobs).toEqual({ ' Yes': { logprob: -0.105, exact: true }, ' No': { logprob: -2.354, exact: true } });
    expect(r.settings_sent).toMatchObject({ logprob_token_ids: [YES, NO], return_tokens_as_token_ids: true });
  });

  it('allowed_token_ids: restricts generation to the candidates and marks one outside the top-k as bounded by it', async () => {
    // " No" is not among the top 3 of the unrestricted distribution: its logprob is at most the 3rd one.
    const p = await vllm([{ json: vllmReply(YES, -0.31, [[YES, -0.31], [9454, -1.92], [13, -3.2]]) }]);

    const r = await p.generate(request('allowed_token_ids', 3));

    expect(wire.current.requests[0]!.body).toMatchObject({ logprobs: true, top_logprobs: 3, return_tokens_as_token_ids: true, allowed_token_ids: [YES, NO] });
    expect(wire.current.requests[0]!.body).not.toHaveProperty('logprob_token_ids');
    expect(r.logprobs).toEqual({ ' Yes': { logprob: -0.31, exact: true }, ' No': { logprob: -3.2, exact: false } });
  });

  it('asks for the top 20 under allowed_token_ids when the settings name no top-k', () => {
    expect(toWireRequest(request('allowed_token_ids'), 'qwen3-8b', 'openai-compatible')).toMatchObject({ top_logprobs: 20 });
  });

  it('a sampled candidate outside the top-k is exact; with no alternatives listed an unseen one is left out', () => {
    const content = [{ token: `token_id:${NO}`, logprob: -6.5, top_logprobs: [] }];
    expect(candidateLogprobs(content, { tokens: TOKENS, method: 'allowed_token_ids' })).toEqual({ ' No': { logprob: -6.5, exact: true } });
    expect(candidateLogprobs([], { tokens: TOKENS, method: 'allowed_token_ids' })).toBeUndefined();
  });

  it('the reply row stores the candidates and whether all of them are exact', () => {
    const item = { item_id: 'i1' } as Far6Item;
    const src = { campaign: 'c', phase: 'generate', model: 'q', language: 'en' as const, providerId: 'openai-compatible/qwen3-8b', simulated: false, cost: () => 0 };
    const result = (exactNo: boolean) => ({
      text: ' Yes',
      finish_reason: 'length',
      usage: { input_tokens: 31, output_tokens: 1 },
      logprobs: { ' Yes': { logprob: -0.31, exact: true }, ' No': { logprob: -3.2, exact: exactNo } },
    });
    const bounded = replyRow(src, item, { ok: true, result: result(false) }, 1, 0, '{}');
    expect(bounded.logprobs_exact).toBe(false);
    expect(JSON.parse(bounded.logprobs_json!)).toEqual(result(false).logprobs);
    expect(replyRow(src, item, { ok: true, result: result(true) }, 1, 0, '{}').logprobs_exact).toBe(true);
    expect(replyRow(src, item, { ok: false, errorClass: 'timeout', message: 'x' }, 1, 0, '{}').logprobs_exact).toBeNull();
  });

  it('is refused on OpenAI and Anthropic, which have no such extension', () => {
    expect(() => toWireRequest(request('logprob_token_ids'), 'gpt-4.1-mini', 'openai')).toThrow(
      expect.objectContaining({ errorClass: 'bad_request', retryable: false, message: expect.stringContaining('candidate_logprobs is a vLLM extension') }),
    );
    expect(() => toAnthropicWireRequest(request('logprob_token_ids'), 'claude-haiku-4-5')).toThrow(expect.objectContaining({ errorClass: 'bad_request' }));
  });

  it('the campaign file takes the setting, logprob_token_ids by default, and refuses an empty or bad one', () => {
    expect(generationSettingsSchema.parse({ candidate_logprobs: { tokens: TOKENS } })).toEqual({ candidate_logprobs: { tokens: TOKENS, method: 'logprob_token_ids' } });
    expect(generationSettingsSchema.safeParse({ candidate_logprobs: { tokens: {} } }).success).toBe(false);
    expect(generationSettingsSchema.safeParse({ candidate_logprobs: { tokens: { ' Yes': -1 } } }).success).toBe(false);
    const bad = generationSettingsSchema.safeParse({ candidate_logprobs: { tokens: TOKENS, method: 'prompt_logprob' } });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('is not a known candidate logprob method; use one of logprob_token_ids, allowed_token_ids, prompt_logprobs');
  });
});
