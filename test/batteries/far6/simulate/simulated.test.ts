import { describe, expect, it } from 'vitest';
import { LANGUAGES } from '../../../../lib/batteries/far6/types.js';
import type { Far6Item, Language, Proposition, QuestionForm } from '../../../../lib/batteries/far6/types.js';
import { CampaignFileError } from '../../../../lib/errors.js';
import { SimulatedProvider, SimulatedRequestError, SimulatedTransientError } from '../../../../lib/providers/index.js';
import { SimulatedRespondent, parseSimulationConfig, simulationConfigSchema, simulationTruth } from '../../../../lib/batteries/far6/simulate/index.js';
import type { SimulationConfigInput } from '../../../../lib/batteries/far6/simulate/index.js';
import { SURFACES, makeItem, statedSide } from './simulatedItems.js';
import type { ItemSpec } from './simulatedItems.js';

const where = { file: 'test.yaml', path: 'models[alpha].simulation' };

/** The simulated respondent as the run builds it, with its reply text at hand. */
function provider(simulation: SimulationConfigInput = {}, seed = 7, modelId = 'alpha', model = modelId) {
  const respondent = new SimulatedRespondent({ seed, modelId, model, config: parseSimulationConfig(simulation, where) });
  return Object.assign(new SimulatedProvider(`simulated/${model}`, respondent), { reply: (item: Far6Item) => respondent.text(item), profile: respondent.profile });
}

function items(n: number, spec: ItemSpec): Far6Item[] {
  return Array.from({ length: n }, (_, repeat) => makeItem({ ...spec, repeat }));
}

const DECISIVE_ONLY: SimulationConfigInput = { undecided_rate: 0, refusal_rate: 0 };
const SEPARATORS = ['.', ':', ' :', ',', '，', '。', '、', '：'];

function startsWithToken(text: string, token: string): boolean {
  const lower = text.toLowerCase();
  const t = token.toLowerCase();
  return lower.startsWith(t) && SEPARATORS.some((s) => lower.startsWith(s, t.length));
}

describe('SimulatedProvider: determinism', () => {
  const batch = [
    ...items(30, { constraint: 'yesno', form: 'negint', language: 'de' }),
    ...items(30, { constraint: 'label', language: 'ja', option_order: 1 }),
    ...items(30, { constraint: 'free', language: 'zh' }),
  ];
  const req = (item: Far6Item) => ({ messages: item.messages, settings: item.settings, item });

  it('gives the same replies for the same seed, whatever the order and concurrency of the calls', async () => {
    // Prepare
    const a = provider();
    const b = provider();
    const shuffled = [...batch].reverse();
    // Act
    const inOrder = [];
    for (const item of batch) inOrder.push((await a.generate(req(item))).text);
    const concurrent = await Promise.all(shuffled.map((item) => b.generate(req(item))));
    // Assess
    expect(concurrent.map((r) => r.text).reverse()).toEqual(inOrder);
  });

  it('gives different replies under another campaign seed or another model id', () => {
    const base = batch.map((i) => provider().reply(i));
    const otherSeed = batch.map((i) => provider({}, 8).reply(i));
    const otherModel = batch.map((i) => provider({}, 7, 'beta').reply(i));
    expect(otherSeed).not.toEqual(base);
    expect(otherModel).not.toEqual(base);
  });

  it('is labelled simulated', () => {
    const p = provider({}, 1, 'alpha', 'alpha-v2');
    expect(p.id).toBe('simulated/alpha-v2');
    expect(p.simulated).toBe(true);
  });
});

describe('SimulatedProvider: replies obey the answer constraint in each language', () => {
  const p = provider(DECISIVE_ONLY);
  const forms: QuestionForm[] = ['plain', 'negint', 'ornot', 'alternative'];

  it.each(LANGUAGES)('%s: yes/no-first replies open with a particle of the map', (language) => {
    for (const form of forms) {
      for (const named of ['P', 'notP'] as Proposition[]) {
        for (const item of items(40, { language, form, named, constraint: 'yesno' })) {
          const text = p.reply(item);
          const particles = item.extras.reading_map.particles!;
          const candidates = [particles.yes, particles.no, ...(particles.reverse ? [particles.reverse] : [])];
          const opening = candidates.filter((c) => startsWithToken(text, c));
          expect(opening, text).toHaveLength(1);
          const side = statedSide(item, text);
          expect(side === 'P' || side === 'notP', text).toBe(true);
          if (form === 'plain' || form === 'ornot') {
            // yes iff the sentence takes the named side
            expect(opening[0] === particles.yes, text).toBe(side === named);
          }
        }
      }
    }
  });

  it.each(LANGUAGES)('%s: verdict-first replies open with the verdict word of the side they state', (language) => {
    for (const item of items(80, { language, constraint: 'verdict', named: 'notP' })) {
      const text = p.reply(item);
      const side = statedSide(item, text) as Proposition;
      expect(['P', 'notP']).toContain(side);
      expect(startsWithToken(text, item.extras.reading_map.verdicts![side]), text).toBe(true);
    }
  });

  it.each(LANGUAGES)('%s: label replies are one of the listed letters, in varied surface forms', (language) => {
    const surfaces = new Set<string>();
    for (const order of [0, 1]) {
      for (const item of items(100, { language, constraint: 'label', option_order: order })) {
        const text = p.reply(item);
        const match = /^(?:\*\*)?([A-Z])(?:\*\*)?(?:\.|[:：] ?(.+))?$/u.exec(text);
        expect(match, text).not.toBeNull();
        const letter = item.extras.reading_map.letters!.find((l) => l.letter === match![1]);
        expect(letter, text).toBeDefined();
        // "A: <proposition>" names the proposition the letter stands for
        if (match![2] !== undefined) expect(statedSide(item, match![2])).toBe(letter!.proposition);
        surfaces.add(text.replace(/[A-Z]/u, 'L').replace(/[:：] .*$/u, ': …').replace(/：.*$/u, ': …'));
      }
    }
    expect([...surfaces].sort()).toEqual(['**L**', 'L', 'L.', 'L: …']);
  });

  it.each(LANGUAGES)('%s: free replies are the proposition sentence, sometimes with a reason', (language) => {
    const s = SURFACES[language];
    let withReason = 0;
    for (const item of items(100, { language, constraint: 'free', form: 'negint' })) {
      const text = p.reply(item);
      expect(text.startsWith(s.P) || text.startsWith(s.notP), text).toBe(true);
      if (text !== s.P && text !== s.notP) withReason++;
    }
    expect(withReason).toBeGreaterThan(10);
    expect(withReason).toBeLessThan(60);
  });

  it('writes refusals and undecided sentences at the configured rates', () => {
    const q = provider({ undecided_rate: 0.2, refusal_rate: 0.1 });
    const counts = { P: 0, notP: 0, both: 0, none: 0 };
    const replies = items(4000, { language: 'fr', constraint: 'yesno' }).map((item) => {
      const text = q.reply(item);
      counts[statedSide(item, text)]++;
      return text;
    });
    const n = replies.length;
    // both-sides: 60 % of the undecided; none: refusals + 40 % of the undecided
    expect(Math.abs(counts.both / n - 0.12)).toBeLessThan(0.02);
    expect(Math.abs(counts.none / n - 0.18)).toBeLessThan(0.025);
  });
});

describe('SimulatedProvider: judgments', () => {
  it('states P with probability π under free sentences (empirical share within tolerance)', () => {
    const p = provider();
    const stories = [
      { id: 'v1', group: 'violation' as const },
      { id: 'c1', group: 'contested' as const },
      { id: 'a1', group: 'acceptable' as const },
    ];
    const truth = simulationTruth({ seed: 7, model: { id: 'alpha' }, stories, languages: ['ko'] });
    for (const story of stories) {
      let decisive = 0;
      let asserted = 0;
      for (const item of items(4000, { language: 'ko', constraint: 'free', story: story.id, story_group: story.group })) {
        const side = statedSide(item, p.reply(item));
        if (side === 'P' || side === 'notP') decisive++;
        if (side === 'P') asserted++;
      }
      const pi = truth.cells[0]!.pi[story.id]!;
      expect(Math.abs(asserted / decisive - pi), `story ${story.id}, π=${pi}`).toBeLessThan(0.03);
    }
  });

  it('orders the story groups as the consensus says: violations high, acceptable low', () => {
    const groups = ['acceptable', 'contested', 'violation'] as const;
    const stories = groups.flatMap((group) => Array.from({ length: 30 }, (_, i) => ({ id: `${group}-${i}`, group })));
    const cell = simulationTruth({ seed: 7, model: { id: 'alpha' }, stories, languages: ['en'] }).cells[0]!;
    const mean = (group: string) => stories.filter((s) => s.group === group).reduce((a, s) => a + cell.pi[s.id]!, 0) / 30;
    expect(mean('violation')).toBeGreaterThan(0.75);
    expect(Math.abs(mean('contested') - 0.5)).toBeLessThan(0.15);
    expect(mean('acceptable')).toBeLessThan(0.25);
  });

  it('keeps π inside [0.03, 0.97] and lets models that share a profile seed share their judgments', () => {
    const stories = Array.from({ length: 40 }, (_, i) => ({ id: `s${i}`, group: (['acceptable', 'contested', 'violation'] as const)[i % 3]! }));
    const t = (id: string, simulation: SimulationConfigInput) => simulationTruth({ seed: 3, model: { id, simulation }, stories, languages: ['en', 'ja'] });
    const a = t('alpha', { profile_seed: 11 });
    const b = t('beta', { profile_seed: 11 });
    const c = t('gamma', { profile_seed: 12 });
    for (const cell of [...a.cells, ...c.cells]) {
      for (const v of Object.values(cell.pi)) {
        expect(v).toBeGreaterThanOrEqual(0.03);
        expect(v).toBeLessThanOrEqual(0.97);
      }
    }
    expect(b.cells.map((x) => x.pi)).toEqual(a.cells.map((x) => x.pi));
    expect(c.cells[0]!.pi).not.toEqual(a.cells[0]!.pi);
    // habits belong to the model id, not to the profile: same judgment, different yes
    expect(b.cells[0]!.keying_bias).not.toBe(a.cells[0]!.keying_bias);
  });
});

describe('SimulatedProvider: particles after a negative interrogative', () => {
  const truthIn = (language: Language) => (language === 'ja' ? 1 : language === 'ko' ? 0.7 : 0);
  const p = provider({ ...DECISIVE_ONLY, negint_truth_mapping: { ja: 1, ko: 0.7, en: 0, de: 0 } });

  function tally(language: Language) {
    let truthLike = 0;
    let reverse = 0;
    let n = 0;
    for (const named of ['P', 'notP'] as Proposition[]) {
      for (const item of items(1500, { language, form: 'negint', constraint: 'yesno', named })) {
        const text = p.reply(item);
        const { yes, no, reverse: rev } = item.extras.reading_map.particles!;
        const side = statedSide(item, text);
        const saidYes = startsWithToken(text, yes) || (rev !== undefined && startsWithToken(text, rev));
        expect(saidYes || startsWithToken(text, no), text).toBe(true);
        if (rev !== undefined && startsWithToken(text, rev)) reverse++;
        // truth/agreement: yes confirms the negative, i.e. goes with the side the question does not name
        if (saidYes === (side !== named)) truthLike++;
        n++;
      }
    }
    return { truthShare: truthLike / n, reverse, n };
  }

  it.each(['en', 'ja', 'ko', 'de'] as Language[])('%s follows the configured truth-mapping share', (language) => {
    const { truthShare } = tally(language);
    expect(Math.abs(truthShare - truthIn(language))).toBeLessThan(0.03);
  });

  it('uses doch in German where the polarity mapping affirms the named term', () => {
    const { reverse, n } = tally('de');
    expect(reverse).toBeGreaterThan(0.2 * n);
  });

  it('flips the particles of the same stances between a truth and a polarity cell', () => {
    // Same model, same seed; only the mapping differs: the stance is drawn first, so it is identical.
    const polarity = provider({ ...DECISIVE_ONLY, negint_truth_mapping: 0 });
    const truth = provider({ ...DECISIVE_ONLY, negint_truth_mapping: 1 });
    for (const item of items(200, { language: 'en', form: 'negint', constraint: 'yesno' })) {
      const a = polarity.reply(item);
      const b = truth.reply(item);
      expect(statedSide(item, a)).toBe(statedSide(item, b));
      expect(startsWithToken(a, 'yes')).toBe(!startsWithToken(b, 'yes'));
    }
  });

  it('draws about a third of cells truth-based (m ≥ 0.8) and the rest polarity-based (m ≤ 0.2) by default', () => {
    const ms = Array.from({ length: 100 }, (_, i) =>
      simulationTruth({ seed: 5, model: { id: `m${i}` }, stories: [], languages: [...LANGUAGES] }).cells.map((c) => c.negint_truth_mapping),
    ).flat();
    expect(ms.every((m) => m >= 0.8 || m <= 0.2)).toBe(true);
    const share = ms.filter((m) => m >= 0.8).length / ms.length;
    expect(share).toBeGreaterThan(0.28);
    expect(share).toBeLessThan(0.39);
  });
});

describe('SimulatedProvider: calls', () => {
  it('throws retryable transient errors at about error_rate, and a retried item returns the reply it would have given', async () => {
    const flaky = provider({ error_rate: 0.3 });
    const steady = provider({ error_rate: 0 });
    let failures = 0;
    let calls = 0;
    for (const item of items(300, { language: 'en', constraint: 'yesno' })) {
      for (;;) {
        calls++;
        try {
          const r = await flaky.generate({ messages: item.messages, settings: item.settings, item });
          expect(r.text).toBe(steady.reply(item));
          break;
        } catch (err) {
          expect(err).toBeInstanceOf(SimulatedTransientError);
          expect(flaky.classifyError(err)).toEqual({ retry: true, kind: 'transient', errorClass: 'simulated_transient' });
          failures++;
        }
      }
    }
    expect(Math.abs(failures / calls - 0.3)).toBeLessThan(0.05);
  });

  it('refuses a request without an item, not retryably', async () => {
    const p = provider();
    const err = await p.generate({ messages: [{ role: 'user', content: 'hi' }], settings: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SimulatedRequestError);
    expect(p.classifyError(err)).toEqual({ retry: false, errorClass: 'simulated_bad_request' });
    expect(p.classifyError(new Error('boom')).retry).toBe(false);
  });

  it('reports usage (CJK per character), finish_reason stop, and truncates at max_tokens', async () => {
    const p = provider(DECISIVE_ONLY);
    const item = makeItem({ language: 'zh', constraint: 'free' });
    const r = await p.generate({ messages: item.messages, settings: item.settings, item });
    expect(r.finish_reason).toBe('stop');
    expect(r.usage.output_tokens).toBeGreaterThanOrEqual([...SURFACES.zh.P].length);
    const chars = item.messages.reduce((n, m) => n + m.content.length, 0);
    expect(r.usage.input_tokens).toBeGreaterThanOrEqual(Math.ceil(chars / 4));
    const short = await p.generate({ messages: item.messages, settings: { max_tokens: 3 }, item });
    expect(short.finish_reason).toBe('length');
    expect(short.usage.output_tokens).toBeLessThanOrEqual(3);
    expect(r.text.startsWith(short.text)).toBe(true);
  });

  it('waits the simulated latency and honours an abort', async () => {
    const p = provider({ latency_ms: 5_000 });
    const item = makeItem();
    const controller = new AbortController();
    const pending = p.generate({ messages: item.messages, settings: {}, item }, controller.signal);
    controller.abort();
    const err = await pending.catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(p.classifyError(err)).toEqual({ retry: false, errorClass: 'aborted' });
  });
});

describe('simulationConfigSchema', () => {
  it('applies the documented defaults', () => {
    expect(simulationConfigSchema.parse({})).toEqual({
      profile_spread: 0.25,
      language_spread: 0.05,
      keying_bias: -0.1,
      second_listed: 0.05,
      named_term_pull: 0.08,
      undecided_rate: 0.05,
      refusal_rate: 0.01,
      latency_ms: 0,
      error_rate: 0,
    });
  });

  it('rejects bad settings with the file, the path inside it and what was expected', () => {
    const bad = () => parseSimulationConfig({ keying_bias: { xx: -0.2 }, refusal_rate: 2, profile_sprad: 1 }, where);
    expect(bad).toThrow(CampaignFileError);
    try {
      bad();
    } catch (err) {
      const e = err as CampaignFileError;
      const paths = e.issues.map((i) => i.path);
      expect(paths).toContain('models[alpha].simulation.refusal_rate');
      expect(paths.some((p) => p.startsWith('models[alpha].simulation.keying_bias'))).toBe(true);
      expect(e.message).toMatch(/test\.yaml: models\[alpha\]\.simulation/);
      expect(e.message).toMatch(/profile_sprad/);
    }
  });
});
