import type { Language, StoryGroup } from '../types.js';
import { parseSimulationConfig } from './simulationConfig.js';
import { SimulationProfile, clamp01 } from './SimulationProfile.js';
import type { SimulationCellTruth, SimulationTruth } from './types.js';

export interface SimulationTruthArgs {
  /** Campaign seed. */
  readonly seed: number;
  /** The campaign model entry: its id and its `simulation:` block (parsed or raw). */
  readonly model: { readonly id: string; readonly simulation?: unknown };
  readonly stories: readonly { readonly id: string; readonly group: StoryGroup }[];
  readonly languages: readonly Language[];
  /** Campaign file, named in configuration errors. */
  readonly file?: string;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * The true parameters a simulated model's replies are drawn from, per language cell, with the
 * values the estimators of Same Judgment, Different Yes §3 and §6 should recover from them. Written beside the
 * results and read by parameter-recovery tests; computed from the same SimulationProfile and
 * the same clamp as the generator, so it matches what the generator does.
 * @example simulationTruth({ seed: 7, model: { id: 'alpha' }, stories: [{ id: 's1', group: 'violation' }], languages: ['en'] }).cells[0].expected_b
 */
export function simulationTruth(args: SimulationTruthArgs): SimulationTruth {
  const config = parseSimulationConfig(args.model.simulation, { file: args.file ?? '(campaign)', path: `models[${args.model.id}].simulation` });
  const profile = new SimulationProfile(args.seed, args.model.id, config);
  const cells: SimulationCellTruth[] = args.languages.map((language) => {
    const h = profile.habits(language);
    const beta = h.keying_bias;
    const m = h.negint_truth_mapping;
    const nu = h.named_term_pull;
    const lambda = h.second_listed;
    const pi: Record<string, number> = {};
    const b: number[] = [];
    const bNegint: number[] = [];
    const second: number[] = [];
    const named: number[] = [];
    for (const story of args.stories) {
      const p = profile.pi(language, story.id, story.group);
      pi[story.id] = p;
      // Stance shares of P when the question names P (q_p) and when it names notP (q_np).
      const namedWhenP = clamp01(p + beta);
      const namedWhenNotP = clamp01(1 - p + beta);
      b.push((namedWhenP - (1 - namedWhenNotP)) / 2);
      // Token rule after a negative interrogative: yes is read as the named side. Yes comes from a
      // named-side stance under polarity (1 − m) and from the other side under truth (m).
      const yesWhenP = (1 - m) * namedWhenP + m * (1 - namedWhenP);
      const yesWhenNotP = (1 - m) * namedWhenNotP + m * (1 - namedWhenNotP);
      bNegint.push((yesWhenP - (1 - yesWhenNotP)) / 2);
      // Label choices: Pr(P) = clamp(π + ν·k + λ·o), k = +1 when P is named, o = +1 when P is second.
      const pr = (k: number, o: number) => clamp01(p + nu * k + lambda * o);
      // Pr(second-listed) − ½ averaged over the two keyings (P second: Pr(P); P first: 1 − Pr(P)).
      second.push(mean([1, -1].map((k) => (pr(k, 1) + 1 - pr(k, -1)) / 2 - 0.5)));
      named.push(mean([1, -1].map((o) => (pr(1, o) - pr(-1, o)) / 2)));
    }
    return {
      model: args.model.id,
      language,
      pi,
      ...h,
      expected_b: mean(b),
      expected_b_negint_token: mean(bNegint),
      expected_second_listed: mean(second),
      expected_named_term_pull: mean(named),
      truth_mapping: m >= 0.5,
    };
  });
  return {
    simulated: true,
    seed: args.seed,
    model: args.model.id,
    profile_seed: profile.profileSeed,
    config,
    stories: args.stories.map((s) => ({ id: s.id, group: s.group })),
    cells,
  };
}
