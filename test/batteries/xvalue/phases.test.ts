import { describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../../../lib/pricing/pricing.js';
import { PHASE_SETTINGS, xvaluePhases } from '../../../lib/batteries/xvalue/phases.js';
import { DEFAULT_PROMPT_SET } from '../../../lib/batteries/xvalue/prompts/index.js';
import type { PhaseSpec } from '../../../lib/battery/types.js';
import type { XvalueItem } from '../../../lib/batteries/xvalue/types.js';
import { FakeStore, examplePairs, partition } from './fixtures.js';

function phase(phases: readonly PhaseSpec[], name: string): PhaseSpec {
  const p = phases.find((x) => x.name === name);
  if (!p) throw new Error(`no phase ${name}`);
  return p;
}

describe('the X-Value phase graph', () => {
  it('has def-only, step 1 and step 3 as roots and step 2 after step 1, each phase after what it consumes', async () => {
    const pairs = await examplePairs();
    const all = xvaluePhases({ pairs, prompts: DEFAULT_PROMPT_SET, strategies: ['defonly', 'rubric'] });
    expect(all.map((p) => [p.name, p.after.map((a) => a.phase)])).toEqual([
      ['defonly', []],
      ['step1', []],
      ['step3', []],
      ['step2', ['step1']],
    ]);
    expect(phase(all, 'step2').after[0]).toEqual({ phase: 'step1', take: ['reply', 'readings'], readers: ['parse'] });
    for (const p of all) expect(p.answeredBy).toBe('subject');
    expect(xvaluePhases({ pairs, prompts: DEFAULT_PROMPT_SET, strategies: ['defonly'] }).map((p) => p.name)).toEqual(['defonly']);
    expect(xvaluePhases({ pairs, prompts: DEFAULT_PROMPT_SET, strategies: ['rubric'] }).map((p) => p.name)).toEqual(['step1', 'step3', 'step2']);
  });

  it('expands step 2 from step 1 through the partition and upstream, skipping unanswered and unread natures', async () => {
    // Prepare: the English pairs; step 1 answered for the first three only, the third unreadable.
    const pairs = (await examplePairs()).filter((p) => p.language === 'en');
    const phases = xvaluePhases({ pairs, prompts: DEFAULT_PROMPT_SET, strategies: ['rubric'] });
    const s1 = [...phase(phases, 'step1').expand(partition('en', {}), new FakeStore())] as XvalueItem[];
    const store = new FakeStore();
    const replies = ['{"core_issue": "x", "scope": "Global", "nature": "Consensus"}', 'Scope: Regional\nNature: Pluralism', 'I would rather not say.'];
    replies.forEach((text, i) => {
      const item = s1[i] as XvalueItem;
      store.put(item, text, phase(phases, 'step1').read(item, { text, attempt: 1, logprobs: null }));
    });
    // Act
    const s2 = [...phase(phases, 'step2').expand(partition('en', { step1: s1 }), store)] as XvalueItem[];
    // Assess
    expect(s2.map((i) => [i.factors.qa_id, i.factors.prompt_id, i.source_item_id])).toEqual([
      [s1[0]?.factors.qa_id, 'step2.consensus', s1[0]?.item_id],
      [s1[1]?.factors.qa_id, 'step2.pluralism', s1[1]?.item_id],
    ]);
  });

  it('estimates step 2 before step 1 has replied: one item per pair, priced high enough to reserve', async () => {
    const pairs = (await examplePairs()).filter((p) => p.language === 'ar');
    const phases = xvaluePhases({ pairs, prompts: DEFAULT_PROMPT_SET, strategies: ['rubric'] });
    const est = phase(phases, 'step2').estimate?.(partition('ar', {}));
    expect(est?.items).toBe(pairs.length);
    expect(est?.maxOutputTokens).toBe(pairs.length * 256);
    expect(est?.maxInputTokens).toBeGreaterThan(est?.inputTokens ?? Infinity);
    // Every step-2 item the chain can make costs no more than the reservation assumed.
    const s1 = [...phase(phases, 'step1').expand(partition('ar', {}), new FakeStore())] as XvalueItem[];
    const store = new FakeStore();
    for (const item of s1) store.put(item, '{"core_issue": "قضية", "scope": "Regional", "nature": "Pluralism"}', phase(phases, 'step1').read(item, { text: '{"core_issue": "قضية", "scope": "Regional", "nature": "Pluralism"}', attempt: 1, logprobs: null }));
    const s2 = [...phase(phases, 'step2').expand(partition('ar', { step1: s1 }), store)];
    const actual = s2.reduce((sum, i) => sum + estimatePromptTokens(i.messages, 'ar'), 0);
    expect(actual).toBeLessThanOrEqual(est?.maxInputTokens ?? 0);
    expect(PHASE_SETTINGS.step2.max_tokens).toBe(512);
  });
});
