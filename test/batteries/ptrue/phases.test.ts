import { describe, expect, it } from 'vitest';
import type { PartitionContext, ReplyView, Upstream } from '../../../lib/battery/types.js';
import { ptrueDesignSchema } from '../../../lib/batteries/ptrue/design.js';
import { expandGenerate, expandVerify, type ExpandContext } from '../../../lib/batteries/ptrue/expand.js';
import { ptruePhases } from '../../../lib/batteries/ptrue/phases.js';
import { buildProbes } from '../../../lib/batteries/ptrue/probe.js';
import type { PtrueItem } from '../../../lib/batteries/ptrue/types.js';
import type { ModelRef } from '../../../lib/battery/types.js';
import { CampaignFileError } from '../../../lib/errors.js';
import { SIX, syntheticItems, testPlan } from './fixtures.js';

const items = syntheticItems(4);
const ctx = (language: string, answerer = 'alpha'): ExpandContext => ({ campaign: 'c', subject: 'alpha', answerer: { id: answerer, settings: { temperature: 0, max_tokens: 256 } }, language });

function partition(language: string, answerer: string, generate: readonly PtrueItem[], settings = { temperature: 0 }): PartitionContext {
  return {
    campaign: { name: 'c', seed: 1, file: '/x/c.yaml', folder: '/x', models: [], roles: {} },
    phase: 'x',
    subject: { id: 'alpha', settings: {} },
    answerer: { id: answerer, settings },
    language,
    items: () => generate,
    each: () => generate,
  };
}

describe('generate expansion (§3.2, §3.4)', () => {
  it('gives every base item in every response language, in a stable order with stable ids', async () => {
    const plan = await testPlan(items, ['alpha']);
    const g = expandGenerate(plan, ctx('ko'));
    expect(g).toHaveLength(4 * 6);
    expect(g.map((i) => i.factors.response_language).slice(0, 6)).toEqual(SIX);
    expect(g.every((i) => i.factors.question_language === 'ko' && i.language === 'ko' && i.phase === 'generate' && i.battery === 'ptrue')).toBe(true);
    expect(new Set(g.map((i) => i.item_id)).size).toBe(24);
    expect(expandGenerate(plan, ctx('ko')).map((i) => i.item_id)).toEqual(g.map((i) => i.item_id));
    // The partition language changes the identity, and so does the campaign.
    expect(expandGenerate(plan, ctx('fr'))[0]!.item_id).not.toBe(g[0]!.item_id);
    expect(expandGenerate(plan, { ...ctx('ko'), campaign: 'd' })[0]!.item_id).not.toBe(g[0]!.item_id);
    expect(g[0]!.factors).toMatchObject({ kind: 'multiple_choice', base_item: 'mc-0', stratum: 's0', verifier_language: null, thinking: 'off', label_prefix: null });
    expect(g[0]!.extras).toMatchObject({ gold_letter: 'A', option_count: 4 });
  });

  it('gives the plan the same items, their ids made on first read (ExpandContext.planning)', async () => {
    const plan = await testPlan(items, ['alpha']);
    const fields = (i: PtrueItem) => ({ ...i, item_id: i.item_id, prompt_key: i.prompt_key });
    const eager = expandGenerate(plan, ctx('ko'));
    const planned = expandGenerate(plan, { ...ctx('ko'), planning: true });
    expect(planned.map(fields)).toEqual(eager.map(fields));
    const g = eager.slice(0, 2);
    const reply = (id: string): ReplyView => ({ text: `B. reply to ${id}`, attempt: 1, logprobs: null });
    expect(expandVerify(plan, { ...ctx('ko'), planning: true }, g, reply).map(fields)).toEqual(expandVerify(plan, ctx('ko'), g, reply).map(fields));
  });

  it('asks greedy decoding, 256 tokens and thinking off in the phase settings', async () => {
    const [generate, verify, judge] = ptruePhases(await testPlan(items, ['alpha']));
    expect(generate!.settings).toEqual({ temperature: 0, max_tokens: 256, thinking: 'off' });
    expect(verify!.settings).toEqual({ temperature: 0, max_tokens: 1, logprobs: true });
    expect(judge).toMatchObject({ name: 'judge', answeredBy: { role: 'judge' }, readingsOf: 'source', readingsFolder: 'generate' });
    expect(verify!.after).toEqual([{ phase: 'generate', take: ['reply'] }]);
  });
});

describe('verify expansion (§3.5)', () => {
  it('makes six verifier copies of each reply with text, question and reply held fixed, and the model candidates', async () => {
    const plan = await testPlan(items, ['alpha']);
    const g = expandGenerate(plan, ctx('en')).slice(0, 3);
    const replies: Record<string, ReplyView> = {
      [g[0]!.item_id]: { text: 'B. Something', attempt: 1, logprobs: null },
      [g[1]!.item_id]: { text: null, attempt: 1, logprobs: null },
    };
    const v = expandVerify(plan, ctx('en'), g, (id) => replies[id]);
    expect(v).toHaveLength(6);
    expect(v.map((i) => i.factors.verifier_language)).toEqual(SIX);
    expect(v.every((i) => i.source_item_id === g[0]!.item_id && i.messages[0]!.content.includes('B. Something'))).toBe(true);
    expect(v[0]!.settings).toMatchObject({ max_tokens: 1, temperature: 0, candidate_logprobs: { method: 'logprob_token_ids' } });
    expect(Object.keys(v[0]!.settings.candidate_logprobs!.tokens)).toEqual(['True', ' True', 'true', ' true', 'TRUE', 'False', ' False', 'false', ' false', 'FALSE']);
    expect(v[0]!.extras.labels).toEqual({ true: ['True', ' True', 'true', ' true', 'TRUE'], false: ['False', ' False', 'false', ' false', 'FALSE'], prefix: [] });
  });

  it('goes through the PhaseSpec with the upstream reply, and estimates before replies exist', async () => {
    const plan = await testPlan(items, ['alpha']);
    const [, verify, judge] = ptruePhases(plan);
    const g = expandGenerate(plan, ctx('en'));
    const up: Upstream = { reply: (_phase, id) => (id === g[1]!.item_id ? { text: 'x', attempt: 1, logprobs: null } : undefined), readings: () => [] };
    expect([...verify!.expand(partition('en', 'alpha', g), up)]).toHaveLength(6);
    expect(verify!.estimate!(partition('en', 'alpha', g))).toMatchObject({ items: g.length * 6, outputTokens: g.length * 6 });
    // Judge: the short-answer items only (two of the four base items, six response languages each).
    expect(judge!.estimate!(partition('en', 'judge', g)).items).toBe(12);
    expect(g.filter((i) => judge!.consumes!(i))).toHaveLength(12);
  });
});

describe('verify estimate with vLLM\'s prompt_logprobs method', () => {
  it('counts one scoring request per candidate beside each call: the prompt again and the candidate in, one token out', async () => {
    const plan = await testPlan(items, ['alpha']);
    const g = expandGenerate(plan, ctx('en'));
    const alpha = plan.probes['alpha']!;
    const tokens = { ' True': 3007, ' False': 3557 };
    const scored = { ...plan, probes: { alpha: { ...alpha, settings: { ...alpha.settings, candidate_logprobs: { tokens, method: 'prompt_logprobs' as const } } } } };
    const one = ptruePhases(plan)[1]!.estimate!(partition('en', 'alpha', g));
    const three = ptruePhases(scored)[1]!.estimate!(partition('en', 'alpha', g));
    // Each candidate is a few tokens by the per-script estimate; what matters is the factor on the prompt.
    const candidates = one.items * 2;
    expect(three.items).toBe(one.items);
    expect(three.inputTokens).toBeGreaterThanOrEqual(3 * one.inputTokens + candidates);
    expect(three.inputTokens).toBeLessThanOrEqual(3 * one.inputTokens + 4 * candidates);
    expect(three.maxInputTokens - 3 * one.maxInputTokens).toBe(three.inputTokens - 3 * one.inputTokens);
    expect(three.outputTokens).toBe(3 * one.outputTokens);
    expect(three.maxOutputTokens).toBe(three.outputTokens);
  });
});

describe('probes per model', () => {
  const design = ptrueDesignSchema.parse({ items: 'x.jsonl' }).probe;
  const model = (id: string, provider: string, name = id): ModelRef => ({ id, provider, model: name, settings: {} });

  it('asks vLLM for candidate token ids from the tokenizer table, and top-k elsewhere', () => {
    const p = buildProbes([model('q', 'openai-compatible', 'Qwen/Qwen3-8B'), model('g', 'openai', 'gpt-4.1-mini'), model('m', 'openai-compatible', 'mistral-7b')], design, 'c.yaml');
    expect(p.q!.settings.candidate_logprobs!.tokens).toMatchObject({ True: 2514, False: 4049 });
    expect(p.q!.via).toBe('candidates');
    expect(p.g).toMatchObject({ via: 'top-k', settings: { max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 20 } });
    expect(p.m!.via).toBe('top-k');
  });

  it('takes a tokenizer or ids from the campaign, and refuses bad ones naming the field', () => {
    const given = ptrueDesignSchema.parse({ items: 'x', probe: { tokenizers: { m: 'llama3' } } }).probe;
    expect(buildProbes([model('m', 'openai-compatible', 'my-model')], given, 'c.yaml').m!.settings.candidate_logprobs!.tokens.True).toBe(2575);
    const bad = ptrueDesignSchema.parse({ items: 'x', probe: { tokenizers: { m: 'gpt2', n: { True: [5] } }, labels: { true: ['True'], false: ['False'] } } }).probe;
    try {
      buildProbes([model('m', 'openai-compatible'), model('n', 'openai-compatible')], bad, 'c.yaml');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CampaignFileError);
      expect((err as CampaignFileError).issues).toEqual([
        { file: 'c.yaml', path: 'design.probe.tokenizers.m', message: 'unknown tokenizer "gpt2"; use one of qwen3, llama3, gemma3, or give label → token ids' },
        { file: 'c.yaml', path: 'design.probe.tokenizers.n', message: 'no token ids for "False"' },
      ]);
    }
  });

  it('marks translated labels that are several tokens as prefixes on the verify items', async () => {
    const labels = ptrueDesignSchema.parse({ items: 'x', probe: { labels: { true: ['Vrai'], false: ['Faux'] }, tokenizers: { q: 'qwen3' } } }).probe;
    const probes = buildProbes([model('q', 'openai-compatible')], labels, 'c.yaml');
    expect(probes.q!.labels.prefix).toEqual(['Vrai', 'Faux']);
    const plan = { ...(await testPlan(items, ['alpha'])), probes: { alpha: probes.q! } };
    const g = expandGenerate(plan, ctx('fr')).slice(0, 1);
    const v = expandVerify(plan, ctx('fr'), g, () => ({ text: 'A', attempt: 1, logprobs: null }));
    expect(v[0]!.factors.label_prefix).toBe(true);
  });
});
