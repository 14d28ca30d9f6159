/**
 * Same Judgment, Different Yes §5 on simulated respondents: with a distinct judgment profile
 * per model the identity analysis finds the same-model neighbour for at least 40 of 48 cells; when
 * every model shares one profile it finds about as many as a random neighbour would.
 *
 * Story scores are drawn from the simulator's own truth (π per model, language and story) with
 * binomial noise, as the label readout would give them: per story and keying, N decisive replies;
 * s = (q_P + q_notP) / 2. Running the whole pipeline would test the same thing, only slower.
 */
import { describe, expect, it } from 'vitest';
import { identityAnalysis } from '../../../../lib/batteries/far6/analysis/identity.js';
import type { IdentityResults, StoryScore } from '../../../../lib/batteries/far6/analysis/types.js';
import { seededRandom } from '../../../../lib/core/hash.js';
import type { Language, StoryGroup } from '../../../../lib/batteries/far6/types.js';
import { simulationTruth } from '../../../../lib/batteries/far6/simulate/index.js';

const R = 'plain/label/rule';
const LANGUAGES: Language[] = ['en', 'zh', 'de', 'ja', 'ko', 'fr'];
/** Same Judgment, Different Yes §3: 105 stories (26 acceptable, 46 contested, 33 violation); Korean and French 45, 15 per group. */
const STORIES: { id: string; group: StoryGroup }[] = [
  ...Array.from({ length: 26 }, (_, i) => ({ id: `acc${i}`, group: 'acceptable' as const })),
  ...Array.from({ length: 46 }, (_, i) => ({ id: `con${i}`, group: 'contested' as const })),
  ...Array.from({ length: 33 }, (_, i) => ({ id: `vio${i}`, group: 'violation' as const })),
];
const SHORT = new Set(['ko', 'fr']);
const IN_SHORT = new Set(STORIES.filter((s) => Number(s.id.replace(/\D/g, '')) < 15).map((s) => s.id));
/** Decisive replies per story and keying (two concept pairs × two orders × three repeats, a generous share). */
const N = 12;

function binomial(rnd: () => number, n: number, p: number): number {
  let k = 0;
  for (let i = 0; i < n; i++) if (rnd() < p) k += 1;
  return k;
}

function simulatedScores(profileSeed: (model: string) => number, noiseSeed: number): StoryScore[] {
  const rnd = seededRandom(noiseSeed);
  const out: StoryScore[] = [];
  for (let m = 0; m < 8; m++) {
    const id = `model${m}`;
    const truth = simulationTruth({ seed: 7, model: { id, simulation: { profile_seed: profileSeed(id) } }, stories: STORIES, languages: LANGUAGES });
    for (const cell of truth.cells) {
      for (const story of STORIES) {
        if (SHORT.has(cell.language) && !IN_SHORT.has(story.id)) continue;
        const pi = cell.pi[story.id] as number;
        const qP = binomial(rnd, N, pi) / N;
        const qNotP = binomial(rnd, N, pi) / N;
        out.push({ model: id, language: cell.language, readout: R, story: story.id, story_group: story.group, s: (qP + qNotP) / 2, b: (qP - qNotP) / 2, n_pairs: 2 });
      }
    }
  }
  return out;
}

function count(res: IdentityResults, metric: string) {
  const c = res.counts.find((x) => x.metric === metric);
  if (!c) throw new Error(`no count for ${metric}`);
  return c;
}

describe('model identity on simulated respondents (Same Judgment, Different Yes §5)', () => {
  it('finds the same model in another language for ≥ 40 of 48 cells when profiles are distinct', () => {
    const res = identityAnalysis(simulatedScores((id) => 1000 + Number(id.slice(5)), 11), { byStoryGroup: false });
    const c = count(res, 'residual_r');
    expect(c.n_cells).toBe(48);
    expect(c.same_model).toBeGreaterThanOrEqual(40);
    // Benchmark: each cell has 5 same-model cells among 47 others.
    expect(c.expected_random).toBeCloseTo(48 * 5 / 47, 10);
    const diff = res.classes.find((r) => r.metric === 'residual_r' && r.contrast === 'same_model-same_language');
    expect(diff?.n_draws).toBe(300);
    expect(diff?.ci_low).toBeGreaterThan(0);
  });

  it('finds about chance when every model shares one profile', () => {
    const res = identityAnalysis(simulatedScores(() => 4242, 11), { byStoryGroup: false });
    const c = count(res, 'residual_r');
    expect(c.n_cells).toBe(48);
    // Chance is 5.1; a random neighbour gives sd ≈ 2.2, so 3 sd is about 7.
    expect(Math.abs(c.same_model - c.expected_random)).toBeLessThanOrEqual(7);
    const diff = res.classes.find((r) => r.metric === 'residual_r' && r.contrast === 'same_model-both_differ');
    expect(diff?.ci_low).toBeLessThan(0.05);
  });
});
