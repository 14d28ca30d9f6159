import { describe, expect, it } from 'vitest';
import type { Language, Proposition, QuestionForm, StoryGroup } from '../../../../lib/batteries/far6/types.js';
import { SimulatedRespondent, parseSimulationConfig, simulationTruth } from '../../../../lib/batteries/far6/simulate/index.js';
import type { SimulationConfigInput, SimulationCellTruth } from '../../../../lib/batteries/far6/simulate/index.js';
import { makeItem, statedSide } from './simulatedItems.js';

const groups: StoryGroup[] = ['acceptable', 'contested', 'violation'];
const stories = Array.from({ length: 30 }, (_, i) => ({ id: `story${i}`, group: groups[i % 3]! }));
const REPEATS = 200;

function setup(simulation: SimulationConfigInput, language: Language) {
  const model = { id: 'alpha', simulation };
  const provider = new SimulatedRespondent({ seed: 11, modelId: 'alpha', config: parseSimulationConfig(simulation, { file: 't', path: 's' }) });
  const cell = simulationTruth({ seed: 11, model, stories, languages: [language] }).cells[0]!;
  return { provider, cell };
}

/**
 * Empirical keying bias b (Same Judgment, Different Yes §3): per story, q_k = share of decisive replies asserting P
 * when the question names k; b = (q_p − q_np)/2, averaged over stories. `read` chooses the reading.
 */
function empiricalB(provider: SimulatedRespondent, language: Language, form: QuestionForm, read: 'sentence' | 'token'): number {
  let sum = 0;
  for (const story of stories) {
    const q: Record<Proposition, number> = { P: 0, notP: 0 };
    for (const named of ['P', 'notP'] as Proposition[]) {
      let decisive = 0;
      let asserted = 0;
      for (let repeat = 0; repeat < REPEATS; repeat++) {
        const item = makeItem({ language, form, constraint: 'yesno', named, story: story.id, story_group: story.group, repeat });
        const text = provider.text(item);
        const side = statedSide(item, text);
        if (side !== 'P' && side !== 'notP') continue; // undecided and refusals are not decisive
        decisive++;
        if (read === 'sentence') {
          if (side === 'P') asserted++;
        } else {
          // Fixed token rule: yes (and doch / si) affirms the named term, no its opposite.
          const { no } = item.extras.reading_map.particles!;
          const saidNo = text.toLowerCase().startsWith(no.toLowerCase());
          if ((saidNo ? (named === 'P' ? 'notP' : 'P') : named) === 'P') asserted++;
        }
      }
      q[named] = asserted / decisive;
    }
    sum += (q.P - q.notP) / 2;
  }
  return sum / stories.length;
}

describe('simulationTruth matches what the generator does', () => {
  const cases: [string, SimulationConfigInput, Language][] = [
    ['default habits', {}, 'en'],
    // A strong preference for no pushes acceptable stories against the clamp: expected_b ≠ β there.
    ['strong no-preference (clamped)', { keying_bias: { de: -0.3 } }, 'de'],
    ['preference for yes', { keying_bias: { ja: 0.15 } }, 'ja'],
  ];

  it.each(cases)('%s: expected_b equals the empirical b of plain yes/no replies', (_name, simulation, language) => {
    const { provider, cell } = setup(simulation, language);
    expect(Math.abs(empiricalB(provider, language, 'plain', 'sentence') - cell.expected_b)).toBeLessThan(0.015);
    // Under plain questions token and sentence readings coincide.
    expect(Math.abs(empiricalB(provider, language, 'plain', 'token') - cell.expected_b)).toBeLessThan(0.015);
  });

  it('exports clamp-aware expected_b, distinct from β when choices hit the clamp', () => {
    const { cell } = setup({ keying_bias: { de: -0.3 } }, 'de');
    expect(cell.keying_bias).toBe(-0.3);
    expect(cell.expected_b).toBeGreaterThan(-0.3 + 0.03);
  });

  it.each([
    ['truth-mapping cell', 1, true],
    ['polarity cell', 0.05, false],
  ] as const)('%s: the negative-interrogative token b matches expected_b_negint_token', (_name, m, truthMapping) => {
    const { provider, cell } = setup({ negint_truth_mapping: m }, 'ko');
    expect(cell.truth_mapping).toBe(truthMapping);
    expect(Math.abs(empiricalB(provider, 'ko', 'negint', 'token') - cell.expected_b_negint_token)).toBeLessThan(0.015);
    // The judged sentence keeps the judgment: its b is the plain-question b.
    expect(Math.abs(empiricalB(provider, 'ko', 'negint', 'sentence') - cell.expected_b)).toBeLessThan(0.015);
  });

  it('label habits: second-listed preference and named-term pull match their expected values', () => {
    const { provider, cell } = setup({ second_listed: { fr: 0.1 }, named_term_pull: { fr: 0.06 } }, 'fr');
    let second = 0;
    let named = 0;
    const share = (story: (typeof stories)[number], k: Proposition, order: number) => {
      let decisive = 0;
      let p = 0;
      for (let repeat = 0; repeat < 100; repeat++) {
        const item = makeItem({ language: 'fr', constraint: 'label', named: k, option_order: order, story: story.id, story_group: story.group, repeat });
        const text = provider.text(item);
        const letter = /^(?:\*\*)?([A-Z])/u.exec(text)?.[1];
        const chosen = item.extras.reading_map.letters!.find((l) => l.letter === letter)?.proposition;
        if (chosen === undefined) continue;
        decisive++;
        if (chosen === 'P') p++;
      }
      return p / decisive;
    };
    for (const story of stories) {
      // option_order 0 lists P first, 1 lists P second
      const pr = { P: [share(story, 'P', 0), share(story, 'P', 1)], notP: [share(story, 'notP', 0), share(story, 'notP', 1)] };
      second += ((pr.P[1]! + 1 - pr.P[0]!) / 2 - 0.5 + (pr.notP[1]! + 1 - pr.notP[0]!) / 2 - 0.5) / 2;
      named += ((pr.P[0]! - pr.notP[0]!) / 2 + (pr.P[1]! - pr.notP[1]!) / 2) / 2;
    }
    expect(Math.abs(second / stories.length - cell.expected_second_listed)).toBeLessThan(0.015);
    expect(Math.abs(named / stories.length - cell.expected_named_term_pull)).toBeLessThan(0.015);
    expect(cell.second_listed).toBe(0.1);
  });

  it('is labelled simulated and records the configuration after defaults', () => {
    const t = simulationTruth({ seed: 11, model: { id: 'alpha', simulation: { profile_seed: 5 } }, stories, languages: ['en', 'zh'] });
    expect(t.simulated).toBe(true);
    expect(t.profile_seed).toBe(5);
    expect(t.config.undecided_rate).toBe(0.05);
    expect(t.cells.map((c: SimulationCellTruth) => c.language)).toEqual(['en', 'zh']);
    expect(Object.keys(t.cells[0]!.pi)).toHaveLength(30);
  });
});
