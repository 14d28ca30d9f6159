import { describe, expect, it } from 'vitest';
import { stableId, uniformFromKey } from '../../../../lib/core/hash.js';
import type { GenerationSettings } from '../../../../lib/core/types.js';
import type { AnswerConstraint, QuestionForm } from '../../../../lib/batteries/far6/types.js';
import {
  JUDGE_SYSTEM_PROMPT,
  ReadingMapError,
  buildJudgeMessages,
  judgeReaderId,
  makeJudgeItem,
  needsJudge,
  parseJudgeOutput,
} from '../../../../lib/batteries/far6/read/index.js';
import { JUDGE_PROMPT_VERSION } from '../../../../lib/batteries/far6/read/judge.js';
import { makeItem } from './fixtures.js';

const between = (text: string, open: string, close: string): string => {
  const start = text.indexOf(open) + open.length;
  return text.slice(start, text.lastIndexOf(close));
};

describe('buildJudgeMessages', () => {
  const item = makeItem({
    language: 'de',
    messages: [{ role: 'user', content: 'Finn verkaufte das Fahrrad.\n\nWar das nicht falsch? Beginne mit „ja“, „nein“ oder „doch“.' }],
    propositions: { P: 'Was Finn getan hat, war falsch.', notP: 'Was Finn getan hat, war richtig.' },
  });

  it('gives the judge the prompt, the reference proposition and the reply verbatim', () => {
    const reply = '**Doch** – das war falsch.\n\n</reply> stray tag, “quotes” and 中文';
    const [system, user] = buildJudgeMessages(item, reply);
    expect(system).toEqual({ role: 'system', content: JUDGE_SYSTEM_PROMPT });
    expect(user?.role).toBe('user');
    const content = user?.content ?? '';
    expect(between(content, '<reference_proposition>', '</reference_proposition>')).toBe(item.extras.propositions.P);
    expect(between(content, '<opposite_proposition>', '</opposite_proposition>')).toBe(item.extras.propositions.notP);
    expect(between(content, '<reply>', '</reply>')).toBe(reply);
    expect(content).toContain(item.messages[0]?.content);
    expect(content).toMatch(/LABEL: P, LABEL: NOT_P, LABEL: BOTH or LABEL: NONE/);
  });

  it('states the codebook: four categories, ignore the opening token and the own view', () => {
    for (const label of ['LABEL: P', 'LABEL: NOT_P', 'LABEL: BOTH', 'LABEL: NONE']) expect(JUDGE_SYSTEM_PROMPT).toContain(label);
    expect(JUDGE_SYSTEM_PROMPT).toMatch(/Ignore the reply's opening token/);
    expect(JUDGE_SYSTEM_PROMPT).toMatch(/Ignore your own view/);
    expect(JUDGE_SYSTEM_PROMPT).toMatch(/refusal, a comment about the question/);
  });

  it('is one uniform prompt: only the item data changes between items', () => {
    const other = makeItem({ language: 'ja', propositions: { P: 'P文', notP: '非P文' } });
    const a = buildJudgeMessages(item, 'x')[1]?.content ?? '';
    const b = buildJudgeMessages(other, 'x')[1]?.content ?? '';
    const skeleton = (s: string): string => s.replace(/<(\w+)>[\s\S]*?<\/\1>/g, '<$1/>');
    expect(skeleton(a)).toBe(skeleton(b));
  });

  it('keeps a system message of the source prompt, labelled by role', () => {
    const withSystem = makeItem({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Was it wrong?' },
      ],
    });
    const content = buildJudgeMessages(withSystem, 'Yes.')[1]?.content ?? '';
    expect(content).toContain('[system]\nBe brief.\n\n[user]\nWas it wrong?');
  });
});

describe('parseJudgeOutput', () => {
  it.each([
    ['LABEL: P', 'P'],
    ['The reply condemns the act.\nLABEL: NOT_P', 'notP'],
    ['label: not_p', 'notP'],
    ['LABEL: NOT P', 'notP'],
    ['LABEL: not-p', 'notP'],
    ['**LABEL:** BOTH', 'both'],
    ['**LABEL: NONE**', 'none'],
    ['LABEL: `P`', 'P'],
    ['Label: "P".', 'P'],
    ['LABEL：NONE', 'none'],
    ['  LABEL:   P   \n', 'P'],
    ['Final label: BOTH', 'both'],
    ['Reasoning…\r\nLABEL: P\r\n', 'P'],
  ] as const)('%j → %s', (text, label) => {
    expect(parseJudgeOutput(text)).toEqual({ label, raw: text });
  });

  it('lets the last LABEL line win', () => {
    expect(parseJudgeOutput('LABEL: P\nOn reflection the reply hedges.\nLABEL: BOTH').label).toBe('both');
    expect(parseJudgeOutput('Options: LABEL: P|NOT_P|BOTH|NONE\nLABEL: NONE').label).toBe('none');
    expect(parseJudgeOutput('LABEL: P\nLABEL: MAYBE').label).toBe('invalid');
  });

  it.each([
    '',
    'P',
    'The answer is NOT_P.',
    'LABEL: P or NOT_P',
    'LABEL: MAYBE',
    'LABEL:',
    'The label: P is right',
    'LABEL P',
  ])('%j → invalid', (text) => {
    expect(parseJudgeOutput(text)).toEqual({ label: 'invalid', raw: text });
  });
});

describe('makeJudgeItem', () => {
  const source = makeItem({ factors: { form: 'negint' } });
  const judge = { id: 'judge-sonnet', settings: { temperature: 0, max_tokens: 400 } };

  it('builds a judge-phase item that points back to the source', () => {
    const j = makeJudgeItem(source, { text: 'No, it was wrong.', attempt: 1 }, judge);
    expect(j).toMatchObject({
      phase: 'judge',
      model: 'judge-sonnet',
      campaign: source.campaign,
      battery: source.battery,
      language: source.language,
      factors: source.factors,
      extras: { propositions: source.extras.propositions, reading_map: { kind: 'none', tokens: {} } },
      settings: judge.settings,
      source_item_id: source.item_id,
    });
    expect(j.messages).toEqual(buildJudgeMessages(source, 'No, it was wrong.'));
    expect(j.item_id).toMatch(/^[0-9a-f]{32}$/);
    expect(makeJudgeItem(source, { text: 'x', attempt: 1 }, judge, 'audit').phase).toBe('audit');
    expect(judgeReaderId(j.model)).toBe('judge:judge-sonnet');
  });

  it('has a stable id that changes with the reply, the attempt, the judge and its settings', () => {
    const reply = { text: 'No, it was wrong.', attempt: 1 };
    const id = makeJudgeItem(source, reply, judge).item_id;
    expect(makeJudgeItem(source, { ...reply }, { ...judge }).item_id).toBe(id);
    const variants = [
      makeJudgeItem(source, { ...reply, text: 'Yes, it was wrong.' }, judge),
      makeJudgeItem(source, { ...reply, attempt: 2 }, judge),
      makeJudgeItem(source, reply, { ...judge, id: 'judge-gpt' }),
      makeJudgeItem(source, reply, { ...judge, settings: { temperature: 1 } }),
      makeJudgeItem(makeItem({ factors: { form: 'plain' } }), reply, judge),
    ];
    expect(new Set([id, ...variants.map((v) => v.item_id)]).size).toBe(variants.length + 1);
  });

  it('hashes the documented identity objects: the ids equal stableId of them', () => {
    const judges = [judge, { id: 'j "quoted" \\ ü', settings: { temperature: 0.5, stop: ['\n', '</x>'], top_p: undefined } }];
    const texts = ['No, it was wrong.', '', '“Doch” – \n\t</reply> 中文 \u2028 \ud83d\ude00', 'x'.repeat(3000)];
    for (const j of judges) {
      for (const text of texts) {
        for (const [attempt, phase] of [[1, 'judge'], [3, 'judge_retest']] as const) {
          const item = makeJudgeItem(source, { text, attempt }, j, phase);
          const settings = j.settings as GenerationSettings;
          expect(item.item_id).toBe(stableId({ source_item_id: source.item_id, attempt, judge: j.id, phase, prompt: JUDGE_PROMPT_VERSION, reply: text, settings }));
          expect(item.prompt_key).toBe(stableId({ source_prompt_key: source.prompt_key, judge: j.id, phase, settings }));
        }
      }
    }
  });

  it('shares the prompt key across replies and attempts of one source prompt', () => {
    const a = makeJudgeItem(source, { text: 'Yes.', attempt: 1 }, judge);
    const b = makeJudgeItem(source, { text: 'No.', attempt: 2 }, judge);
    const repeat = makeJudgeItem(makeItem({ factors: { form: 'negint', repeat: 1 } }), { text: 'No.', attempt: 1 }, judge);
    expect(a.prompt_key).toBe(b.prompt_key);
    expect(repeat.prompt_key).toBe(a.prompt_key);
    expect(repeat.item_id).not.toBe(b.item_id);
  });
});

describe('needsJudge (Judged coverage)', () => {
  const FORMS: QuestionForm[] = ['plain', 'negint', 'alternative', 'ornot'];
  const item = (constraint: AnswerConstraint, form: QuestionForm, story = 's0') =>
    makeItem({ factors: { constraint, form, story } });

  it('judges every free and verdict reply and every yes/no reply to plain and negint questions', () => {
    for (const form of FORMS) {
      expect(needsJudge(item('free', form), 7, 0)).toBe(true);
      expect(needsJudge(item('verdict', form), 7, 0)).toBe(true);
    }
    expect(needsJudge(item('yesno', 'plain'), 7, 0)).toBe(true);
    expect(needsJudge(item('yesno', 'negint'), 7, 0)).toBe(true);
  });

  it('samples the other conditions at the rate, by a seeded draw on the prompt key', () => {
    const others = [
      ...(['ornot', 'alternative'] as const).map((f) => ['yesno', f] as const),
      ...FORMS.map((f) => ['label', f] as const),
    ];
    for (const [constraint, form] of others) {
      const items = Array.from({ length: 2000 }, (_, i) => item(constraint, form, `s${i}`));
      const judged = items.filter((it) => needsJudge(it, 42, 0.04));
      // Binomial(2000, 0.04): mean 80, sd ≈ 8.8; the draw is fixed, so this cannot flake.
      expect(judged.length).toBeGreaterThan(50);
      expect(judged.length).toBeLessThan(110);
      for (const it of items.slice(0, 200)) {
        expect(needsJudge(it, 42, 0.04)).toBe(uniformFromKey(`42${it.prompt_key}`) < 0.04);
      }
      expect(items.every((it) => !needsJudge(it, 42, 0))).toBe(true);
      expect(items.every((it) => needsJudge(it, 42, 1))).toBe(true);
    }
  });

  it('is deterministic, judges all repeats of a prompt together, and depends on the seed', () => {
    const items = Array.from({ length: 400 }, (_, i) => item('label', 'plain', `s${i}`));
    const pick = (seed: number) => items.map((it) => needsJudge(it, seed, 0.25));
    expect(pick(1)).toEqual(pick(1));
    expect(pick(1)).not.toEqual(pick(2));
    const r0 = makeItem({ factors: { constraint: 'label', story: 's3', repeat: 0 } });
    const r1 = makeItem({ factors: { constraint: 'label', story: 's3', repeat: 1 } });
    expect(r0.item_id).not.toBe(r1.item_id);
    expect(needsJudge(r0, 1, 0.5)).toBe(needsJudge(r1, 1, 0.5));
  });

  it('rejects a rate outside [0, 1]', () => {
    expect(() => needsJudge(item('label', 'plain'), 1, 1.5)).toThrow(ReadingMapError);
    expect(() => needsJudge(item('label', 'plain'), 1, Number.NaN)).toThrow(/outside \[0, 1\]/);
  });
});
