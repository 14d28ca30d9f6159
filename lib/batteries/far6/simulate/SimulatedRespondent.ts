/**
 * The simulated respondent: a documented generator of replies that stands in for a model when
 * there is no network (DESIGN.md "Without network"). It reads the item's design factors, reading
 * map and proposition sentences and answers as a model with known judgments and answer habits
 * would, so that the analysis can be checked to recover them (Same Judgment, Different Yes §3, §6, §7).
 *
 * Generative model (README.md beside this file has the long form):
 *
 *   π = π(model, language, story)                       probability of asserting P (SimulationProfile)
 *   per reply, RNG keyed by campaign seed + model id + item_id (independent of order and concurrency):
 *     u < refusal_rate                    → refusal sentence
 *     u < refusal_rate + undecided_rate   → both-sides sentence (both propositions) or no-position sentence
 *     otherwise a stance, by answer constraint:
 *       free         P with prob π
 *       verdict      named side with prob π_named (π if named = P, else 1 − π); opens with its verdict word
 *       yesno        plain / ornot / negint: named side with prob clamp(π_named + β)
 *                    particle under plain / ornot: yes iff stance = named
 *                    under negint: with prob m truth/agreement (yes iff stance ≠ named), else polarity
 *                    (yes — or doch / si where the language has one — iff stance = named)
 *                    alternative question: P with prob π, particle as under plain
 *       label        P with prob clamp(π + ν·(named = P ? 1 : −1) + λ·(P listed second ? 1 : −1));
 *                    answered "A", "A.", "**A**" or "A: <proposition>"
 *   A decisive reply is the opening (particle, verdict word or letter) and the chosen proposition
 *   sentence from item.extras.propositions, sometimes followed by a short reason sentence.
 */
import { SimulatedRequestError, seedFromKey, seededRandom } from '../../../api/battery.js';
import type { PromptItem, SimulatedModel, SimulatedReply } from '../../../api/battery.js';
import type { Far6Item, Language, Proposition } from '../types.js';
import { PHRASES } from './phrases.js';
import type { LanguagePhrases } from './phrases.js';
import type { SimulationConfig } from './simulationConfig.js';
import { SimulationProfile, clamp01 } from './SimulationProfile.js';

/** Share of undecided replies that take both sides (the rest take no position). */
export const BOTH_SIDES_SHARE = 0.6;
/** Share of decisive replies followed by a short reason sentence. */
export const REASON_SHARE = 0.3;
/** Under the polarity mapping, share of named-side answers that use doch / si where the language has one. */
export const REVERSE_PARTICLE_SHARE = 0.85;

export interface SimulatedRespondentOptions {
  /** Campaign seed. */
  readonly seed: number;
  /** Campaign model id: keys the replies and, by default, the profile. */
  readonly modelId: string;
  /** Model name shown in the provider id (`simulated/<model>`); defaults to the model id. */
  readonly model?: string;
  /** Parsed configuration (`simulationConfigSchema`). */
  readonly config: SimulationConfig;
}

type Rng = () => number;

function pick<T>(list: readonly T[], rng: Rng): T {
  return list[Math.floor(rng() * list.length)] as T;
}

function other(p: Proposition): Proposition {
  return p === 'P' ? 'notP' : 'P';
}

function capitalise(word: string, ph: LanguagePhrases): string {
  if (!ph.latin || word.length === 0) return word;
  const first = word[0] as string;
  const upper = first.toUpperCase();
  return upper === first ? word : upper + word.slice(1);
}

const TERMINAL = /[.!?。！？…]["'»」』)）]*$/u;

/** The proposition as a complete sentence, with a final stop if it lacks one. */
function sentence(text: string, ph: LanguagePhrases): string {
  const t = text.trim();
  return TERMINAL.test(t) ? t : t + ph.stop;
}

export class SimulatedRespondent implements SimulatedModel {
  readonly profile: SimulationProfile;
  readonly effectsKey: string;
  readonly errorRate: number;
  readonly latencyMs: number;
  private readonly id: string;
  private readonly keyBase: string;

  constructor(options: SimulatedRespondentOptions) {
    this.id = `simulated/${options.model ?? options.modelId}`;
    this.profile = new SimulationProfile(options.seed, options.modelId, options.config);
    this.keyBase = `sim:${options.seed}|${options.modelId}|`;
    this.effectsKey = `${this.keyBase}effects`;
    this.errorRate = options.config.error_rate;
    this.latencyMs = options.config.latency_ms;
  }

  /**
   * The reply text for an item, without latency or errors: a pure function of the campaign seed,
   * the model and the item.
   */
  reply(item: PromptItem): SimulatedReply {
    return { text: this.text(item as Far6Item) };
  }

  /** The reply text: a pure function of the campaign seed, the model and the item. */
  text(item: Far6Item): string {
    const rng = seededRandom(seedFromKey(this.keyBase + item.item_id));
    const f = item.factors;
    const language = item.language as Language;
    const ph = PHRASES[language];
    if (ph === undefined) throw new SimulatedRequestError(`${this.id}: item ${item.item_id} has unknown language "${item.language}"`, this.id);
    const habits = this.profile.habits(language);
    const pi = this.profile.pi(language, f.story, f.story_group);

    const u = rng();
    if (u < habits.refusal_rate) return pick(ph.refusals, rng);
    if (u < habits.refusal_rate + habits.undecided_rate) {
      if (rng() >= BOTH_SIDES_SHARE) return pick(ph.noPosition, rng);
      const first: Proposition = rng() < 0.5 ? 'P' : 'notP';
      return pick(ph.bothSides, rng)
        .replace('{A}', sentence(item.extras.propositions[first], ph))
        .replace('{B}', sentence(item.extras.propositions[other(first)], ph));
    }

    const piNamed = f.named === 'P' ? pi : 1 - pi;
    let stance: Proposition;
    let opening: string;
    switch (f.constraint) {
      case 'free':
        stance = rng() < pi ? 'P' : 'notP';
        return this.withReason(sentence(item.extras.propositions[stance], ph), ph, rng);
      case 'verdict': {
        const verdicts = item.extras.reading_map.verdicts;
        if (verdicts === undefined) throw this.missing(item, 'reading_map.verdicts');
        stance = rng() < piNamed ? f.named : other(f.named);
        opening = capitalise(verdicts[stance], ph);
        break;
      }
      case 'yesno': {
        const particles = item.extras.reading_map.particles;
        if (particles === undefined) throw this.missing(item, 'reading_map.particles');
        let yes: boolean;
        let reverse = false;
        if (f.form === 'alternative') {
          stance = rng() < pi ? 'P' : 'notP';
          yes = stance === f.named;
        } else {
          const named = rng() < clamp01(piNamed + habits.keying_bias);
          stance = named ? f.named : other(f.named);
          if (f.form === 'negint' && rng() < habits.negint_truth_mapping) {
            yes = !named; // truth/agreement: yes confirms the negative
          } else {
            yes = named; // polarity: yes (or doch / si) affirms the named term
            reverse = f.form === 'negint' && named && particles.reverse !== undefined && rng() < REVERSE_PARTICLE_SHARE;
          }
        }
        opening = capitalise(reverse ? (particles.reverse as string) : yes ? particles.yes : particles.no, ph);
        break;
      }
      case 'label': {
        const letters = item.extras.reading_map.letters;
        const pEntry = letters?.find((l) => l.proposition === 'P');
        const notPEntry = letters?.find((l) => l.proposition === 'notP');
        if (letters === undefined || pEntry === undefined || notPEntry === undefined) throw this.missing(item, 'reading_map.letters (one letter for P, one for notP)');
        const pSecond = letters.indexOf(pEntry) > letters.indexOf(notPEntry);
        const pP = clamp01(pi + habits.named_term_pull * (f.named === 'P' ? 1 : -1) + habits.second_listed * (pSecond ? 1 : -1));
        stance = rng() < pP ? 'P' : 'notP';
        const letter = stance === 'P' ? pEntry.letter : notPEntry.letter;
        const v = rng();
        if (v < 0.4) return letter;
        if (v < 0.6) return `${letter}.`;
        if (v < 0.75) return `**${letter}**`;
        return `${letter}${ph.latin || language === 'ko' ? ': ' : '：'}${sentence(item.extras.propositions[stance], ph)}`;
      }
      default:
        throw new SimulatedRequestError(`${this.id}: item ${item.item_id} has unknown answer constraint "${String(f.constraint)}"`, this.id);
    }
    return this.withReason(opening + pick(ph.joints, rng) + sentence(item.extras.propositions[stance], ph), ph, rng);
  }

  private withReason(text: string, ph: LanguagePhrases, rng: Rng): string {
    if (rng() >= REASON_SHARE) return text;
    return text + (ph.latin || ph.stop === '.' ? ' ' : '') + pick(ph.reasons, rng);
  }

  private missing(item: Far6Item, what: string): SimulatedRequestError {
    return new SimulatedRequestError(
      `${this.id}: item ${item.item_id} (constraint ${item.factors.constraint}) has no ${what}; the simulated provider answers from it`,
      this.id,
    );
  }
}
