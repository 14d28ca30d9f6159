/**
 * The verify phase against a local server speaking vLLM's OpenAI-compatible wire format with
 * logprobs: the battery's verify items go through the real `openai-compatible` provider (the
 * official SDK), and its replies through the battery's ptrue reader. No core runtime: the loop
 * here stands in for the shard worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ptrueDesignSchema } from '../../../lib/batteries/ptrue/design.js';
import { expandGenerate, expandVerify, type ExpandContext } from '../../../lib/batteries/ptrue/expand.js';
import { buildProbes } from '../../../lib/batteries/ptrue/probe.js';
import type { PtruePlan } from '../../../lib/batteries/ptrue/plan.js';
import { readVerify } from '../../../lib/batteries/ptrue/read/readers.js';
import type { PtrueItem } from '../../../lib/batteries/ptrue/types.js';
import { createProvider } from '../../../lib/providers/registry.js';
import { startWireServer, type RecordedRequest, type WireReply, type WireServer } from '../../providers/helpers/wireServer.js';
import { syntheticItems, testPlan } from './fixtures.js';

const QWEN = { TRUE: 2514, SPACE_TRUE: 3007, FALSE: 4049, SPACE_FALSE: 3557 };

/** A vLLM chat completion of one token; logprobs named `token_id:<id>` (return_tokens_as_token_ids). */
function vllmReply(sampled: number, entries: readonly (readonly [number, number])[]) {
  const lp = (id: number) => entries.find(([i]) => i === id)?.[1] ?? -30;
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_764_489_600,
    model: 'Qwen/Qwen3-8B',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'True', tool_calls: [], reasoning_content: null },
        logprobs: { content: [{ token: `token_id:${sampled}`, logprob: lp(sampled), bytes: null, top_logprobs: entries.map(([id, logprob]) => ({ token: `token_id:${id}`, logprob, bytes: null })) }] },
        finish_reason: 'length',
        stop_reason: null,
      },
    ],
    usage: { prompt_tokens: 120, total_tokens: 121, completion_tokens: 1, prompt_tokens_details: null },
  };
}

/** Answers every requested candidate id (logprob_token_ids) from a table id → logprob. */
const answerCandidates = (table: Readonly<Record<number, number>>): WireReply => ({
  from: (req: RecordedRequest) => {
    const ids = ((req.body as { logprob_token_ids?: number[] }).logprob_token_ids ?? []) as number[];
    const entries = ids.map((id) => [id, table[id] ?? -25] as const);
    const best = [...entries].sort((a, b) => b[1] - a[1])[0]![0];
    return { json: vllmReply(best, entries) };
  },
});

let servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function setup(design: Record<string, unknown> = {}) {
  const probeDesign = ptrueDesignSchema.parse({ items: 'x.jsonl', ...design }).probe;
  const entry = { id: 'qwen', provider: 'openai-compatible', model: 'Qwen/Qwen3-8B', settings: {} };
  const base = await testPlan(syntheticItems(2), ['qwen']);
  const plan: PtruePlan = { ...base, probes: buildProbes([entry], probeDesign, 'c.yaml') };
  const ctx: ExpandContext = { campaign: 'c', subject: 'qwen', answerer: { id: 'qwen', settings: { temperature: 0, max_tokens: 1, logprobs: true } }, language: 'en' };
  const generate = expandGenerate(plan, ctx).slice(0, 1);
  const verify = expandVerify(plan, ctx, generate, () => ({ text: 'B. It is the second option.', attempt: 1, logprobs: null }));
  return { plan, verify };
}

async function provider(script: readonly WireReply[]) {
  const server = await startWireServer(script);
  servers.push(server);
  return { server, p: await createProvider({ id: 'qwen', provider: 'openai-compatible', model: 'Qwen/Qwen3-8B', base_url: `${server.url}/v1` }, { seed: 1, env: {} }) };
}

async function ask(p: Awaited<ReturnType<typeof provider>>['p'], item: PtrueItem) {
  const r = await p.generate({ messages: item.messages, settings: item.settings, item });
  return readVerify(item, { text: r.text, attempt: 1, logprobs: r.logprobs ?? null })[0]!;
}

describe('verify phase on a vLLM wire server', () => {
  it('sends one token with the label candidates and reads P(True) from the largest variant on each side', async () => {
    const { verify } = await setup();
    const { server, p } = await provider([answerCandidates({ [QWEN.TRUE]: Math.log(0.6), [QWEN.SPACE_TRUE]: Math.log(0.1), [QWEN.FALSE]: Math.log(0.2), [QWEN.SPACE_FALSE]: Math.log(0.05) })]);

    const reading = await ask(p, verify[0]!);

    const body = server.requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ max_tokens: 1, temperature: 0, logprobs: true, return_tokens_as_token_ids: true });
    expect((body.logprob_token_ids as number[]).slice(0, 2)).toEqual([QWEN.TRUE, QWEN.SPACE_TRUE]);
    expect((body.messages as { content: string }[])[0]!.content).toContain('B. It is the second option.');
    expect(reading.label).toBe('True');
    expect(reading.value).toBeCloseTo(0.6 / 0.8, 9);
    expect(JSON.parse(reading.raw!)).toMatchObject({ true: ['True', expect.any(Number)], false: ['False', expect.any(Number)], bound: 'exact' });
  });

  it('a label token missing from the top-k (allowed_token_ids): P(True) is computed on the bound and flagged', async () => {
    const { verify } = await setup({ probe: { method: 'allowed_token_ids', top_logprobs: 3 } });
    // Top 3 of the unrestricted distribution: True and two other tokens; no False variant listed.
    const { server, p } = await provider([{ json: vllmReply(QWEN.TRUE, [[QWEN.TRUE, -0.3], [9454, -1.9], [13, -3.2]]) }]);

    const reading = await ask(p, verify[0]!);

    expect(server.requests[0]!.body).toMatchObject({ allowed_token_ids: expect.arrayContaining([QWEN.TRUE, QWEN.FALSE]), top_logprobs: 3 });
    expect(JSON.parse(reading.raw!)).toMatchObject({ bound: 'lower', false: ['False', -3.2] });
    expect(reading.value).toBeCloseTo(1 / (1 + Math.exp(-3.2 + 0.3)), 9);
  });

  it('a label spanning several tokens (App. A): the first token is asked for and the reading says it scored a prefix', async () => {
    const { verify } = await setup({ probe: { labels: { true: ['Vrai'], false: ['Faux'] } } });
    expect(verify[0]!.factors.label_prefix).toBe(true);
    // Qwen: "Vrai" = [53, 67862], "Faux" = [37, 11981]: the probe reads tokens 53 ("V") and 37 ("F").
    const { server, p } = await provider([answerCandidates({ 53: Math.log(0.3), 37: Math.log(0.1) })]);

    const reading = await ask(p, verify[0]!);

    expect((server.requests[0]!.body as { logprob_token_ids: number[] }).logprob_token_ids).toEqual([53, 37]);
    expect(reading.value).toBeCloseTo(0.75, 9);
    expect(JSON.parse(reading.raw!).prefix).toEqual(['Vrai', 'Faux']);
  });

  it('a server that dies mid-phase: the call fails as retryable, what was read stays, and a rerun asks only for the rest', async () => {
    const { verify } = await setup();
    const ok = answerCandidates({ [QWEN.TRUE]: -0.2, [QWEN.FALSE]: -1.8 });
    const first = await provider([ok, ok, { drop: true }]);
    const read = new Map<string, number | null | undefined>();
    let failure: unknown;
    for (const item of verify) {
      try {
        read.set(item.item_id, (await ask(first.p, item)).value);
      } catch (err) {
        failure = err;
        break;
      }
    }
    expect(read.size).toBe(2);
    expect(first.p.classifyError(failure)).toMatchObject({ retry: true });

    // The items re-expand to the same ids, so the rerun sends only those without a reading.
    const again = await setup();
    expect(again.verify.map((i) => i.item_id)).toEqual(verify.map((i) => i.item_id));
    const second = await provider([ok]);
    for (const item of again.verify.filter((i) => !read.has(i.item_id))) read.set(item.item_id, (await ask(second.p, item)).value);
    expect(second.server.requests).toHaveLength(verify.length - 2);
    expect(read.size).toBe(verify.length);
    expect([...read.values()].every((v) => typeof v === 'number' && Math.abs(v - 1 / (1 + Math.exp(-1.6))) < 1e-9)).toBe(true);
  });
});
