import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../../lib/core/types.js';
import { LANGUAGES } from '../../../../lib/batteries/far6/types.js';
import type { Far6Item } from '../../../../lib/batteries/far6/types.js';
import { SimulatedProvider, SimulatedRequestError, createProvider } from '../../../../lib/providers/index.js';
import { far6Simulator, SimulatedJudge, SimulatedRespondent, judgeLabel, parseSimulatedJudgeConfig, parseSimulationConfig } from '../../../../lib/batteries/far6/simulate/index.js';
import type { JudgeLabel, SimulatedJudgeConfigInput } from '../../../../lib/batteries/far6/simulate/index.js';
import { SURFACES, makeItem, statedSide } from './simulatedItems.js';

const where = { file: 'test.yaml', path: 'judge.simulation' };

/** The simulated judge as the run builds it. */
function judge(simulation: SimulatedJudgeConfigInput = {}): SimulatedProvider {
  return new SimulatedProvider('simulated/judge', new SimulatedJudge({ seed: 7, modelId: 'judge', config: parseSimulatedJudgeConfig(simulation, where) }));
}

/** A judge-phase request as lib/read builds it: story, instruction, reference proposition and the verbatim reply. */
function judgeRequest(source: Far6Item, reply: string, n = 0) {
  const item: Far6Item = { ...source, item_id: `judge|${source.item_id}|${n}`, phase: 'judge', source_item_id: source.item_id };
  const content = [
    'Story: …',
    `<reference_proposition>${source.extras.propositions.P}</reference_proposition>`,
    `<reply>${reply}</reply>`,
    'Code what the reply asserts about the reference proposition, ignoring its opening token.',
  ].join('\n');
  const messages: [ChatMessage, ChatMessage] = [
    { role: 'system', content: 'You code replies.' },
    { role: 'user', content },
  ];
  return { messages, settings: {}, item };
}

function labelOf(text: string): JudgeLabel {
  const m = /\nLABEL: (P|NOT_P|BOTH|NONE)$/u.exec(text);
  if (m === null) throw new Error(`no final LABEL line in ${JSON.stringify(text)}`);
  return m[1] as JudgeLabel;
}

const EXPECTED: Record<string, JudgeLabel> = { P: 'P', notP: 'NOT_P', both: 'BOTH', none: 'NONE' };

describe('simulated judge', () => {
  it.each(LANGUAGES)('%s: labels hand-written replies, ignoring the opening token', async (language) => {
    const s = SURFACES[language];
    const source = makeItem({ language, constraint: 'yesno', form: 'negint' });
    const cases: [string, JudgeLabel][] = [
      [`${s.yes}. ${s.notP}`, 'NOT_P'], // the particle says yes; the sentence says notP
      [`${s.no}. ${s.P}`, 'P'],
      [s.P, 'P'],
      [`${s.P} ${s.notP}`, 'BOTH'],
      [s.yes, 'NONE'],
      ['**A**', 'NONE'],
    ];
    const j = judge({ error_rate: 0 });
    for (const [i, [reply, expected]] of cases.entries()) {
      const r = await j.generate(judgeRequest(source, reply, i));
      expect(labelOf(r.text), reply).toBe(expected);
      expect(r.finish_reason).toBe('stop');
    }
  });

  it('labels simulated replies of every kind correctly with error_rate 0', async () => {
    const respondent = new SimulatedRespondent({ seed: 7, modelId: 'alpha', config: parseSimulationConfig({ undecided_rate: 0.2, refusal_rate: 0.05 }, where) });
    const j = judge({ error_rate: 0 });
    const seen = new Set<JudgeLabel>();
    for (const language of LANGUAGES) {
      for (const constraint of ['free', 'verdict', 'yesno', 'label'] as const) {
        for (let repeat = 0; repeat < 40; repeat++) {
          const source = makeItem({ language, constraint, form: 'negint', repeat });
          const reply = respondent.text(source);
          const label = labelOf((await j.generate(judgeRequest(source, reply))).text);
          expect(label, reply).toBe(EXPECTED[statedSide(source, reply)]);
          seen.add(label);
        }
      }
    }
    expect([...seen].sort()).toEqual(['BOTH', 'NONE', 'NOT_P', 'P']);
  });

  it('gives a wrong label on about error_rate of the replies, reproducibly', async () => {
    const j = judge({ error_rate: 0.2 });
    const again = judge({ error_rate: 0.2 });
    const source = makeItem({ language: 'de', constraint: 'yesno' });
    let wrong = 0;
    const n = 3000;
    for (let i = 0; i < n; i++) {
      const req = judgeRequest(source, `${SURFACES.de.yes}. ${SURFACES.de.P}`, i);
      const text = (await j.generate(req)).text;
      expect((await again.generate(req)).text).toBe(text);
      if (labelOf(text) !== 'P') wrong++;
    }
    expect(Math.abs(wrong / n - 0.2)).toBeLessThan(0.025);
  });

  it('handles a reference proposition that is contained in its opposite', () => {
    const P = 'It is wrong.';
    const notP = 'It is not the case that it is wrong.';
    expect(judgeLabel('Yes. It is wrong.', P, notP)).toBe('P');
    expect(judgeLabel('No. It is not the case that it is wrong.', P, notP)).toBe('NOT_P');
    expect(judgeLabel('It is not the case that it is wrong. Then again, it is wrong.', P, notP)).toBe('BOTH');
    expect(judgeLabel('It is not the case that it is wrong.', notP, P)).toBe('P');
  });

  it('judges against P when a prompt names notP as the reference', async () => {
    const source = makeItem({ language: 'en' });
    const req = judgeRequest(source, `Yes. ${source.extras.propositions.P}`);
    const [system, user] = req.messages;
    const content = user.content.replace(source.extras.propositions.P, source.extras.propositions.notP);
    const r = await judge({ error_rate: 0 }).generate({ ...req, messages: [system, { role: 'user', content }] });
    expect(labelOf(r.text)).toBe('NOT_P');
  });

  it('refuses a request without a <reply> or without an item', async () => {
    const source = makeItem();
    const j = judge();
    const noReply = await j.generate({ messages: [{ role: 'user', content: 'hello' }], settings: {}, item: source }).catch((e: unknown) => e);
    expect(noReply).toBeInstanceOf(SimulatedRequestError);
    const noItem = await j.generate({ ...judgeRequest(source, 'x'), item: undefined }).catch((e: unknown) => e);
    expect(noItem).toBeInstanceOf(SimulatedRequestError);
    expect(j.classifyError(noItem).retry).toBe(false);
  });

  it('is built by the registry for role judge, labelled simulated, with the judge schema', async () => {
    const p = await createProvider({ id: 'judge', provider: 'simulated', model: 'sonnet-sim', role: 'judge', simulation: { error_rate: 0 } }, { seed: 7, simulator: far6Simulator });
    expect(p).toBeInstanceOf(SimulatedProvider);
    expect(p.id).toBe('simulated/sonnet-sim');
    expect(p.simulated).toBe(true);
    await expect(
      createProvider({ id: 'judge', provider: 'simulated', model: 'x', role: 'judge', simulation: { keying_bias: 0 } }, { seed: 7, file: 'demo.yaml', simulator: far6Simulator }),
    ).rejects.toThrow(/demo\.yaml: judge\.simulation/);
  });
});
