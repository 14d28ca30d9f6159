/**
 * A simulated model under test for the P(True) battery (config.ts gives the model): it answers
 * generate items (a correct or wrong answer, in the requested language or not, with known rates)
 * and verify items (first-token logprobs of the label candidates whose P(True) has a known
 * calibration per verifier language). Labelled simulated by the provider around it.
 */
import { SimulatedRequestError, uniformFromKey } from '../../../api/battery.js';
import type { GenerateRequest, PromptItem, SimulatedModel, SimulatedReply, TokenLogprob } from '../../../api/battery.js';
import { OPTION_LETTERS, PHASES, type PtrueItem } from '../types.js';
import type { PtrueSimulation } from './config.js';
import { ptrueLogit, replyTruth, type ReplyKey } from './draws.js';
import { mentionsAny, phrasesFor } from './phrases.js';

export interface SimulatedPtrueRespondentOptions {
  readonly seed: number;
  readonly modelId: string;
  readonly config: PtrueSimulation;
}

/** Share of a side's probability mass on its first (most likely) variant; the rest is split evenly. */
const FIRST_VARIANT_SHARE = 0.9;
/** Probability mass on the label tokens together; the rest goes to other tokens. */
const LABEL_MASS = 0.98;

// log σ(z) and log(1 − σ(z)) without overflow or log(0) (logprobs must stay finite for JSON).
const logSigmoid = (z: number): number => (z >= 0 ? -Math.log1p(Math.exp(-z)) : z - Math.log1p(Math.exp(z)));

/**
 * First-token logprobs of a side's variants for a side probability with log `logSide`: the first
 * variant FIRST_VARIANT_SHARE of LABEL_MASS × side, the others share the rest, so the ratio of the
 * two sides' largest variants is exactly P(True) / P(False).
 */
export function sideLogprobs(variants: readonly string[], logSide: number): Record<string, TokenLogprob> {
  const out: Record<string, TokenLogprob> = {};
  const rest = variants.length > 1 ? (1 - FIRST_VARIANT_SHARE) / (variants.length - 1) : 0;
  variants.forEach((v, i) => {
    const share = i === 0 ? (variants.length > 1 ? FIRST_VARIANT_SHARE : 1) : rest;
    out[v] = { logprob: logSide + Math.log(LABEL_MASS * share), exact: true };
  });
  return out;
}

export class SimulatedPtrueRespondent implements SimulatedModel {
  readonly effectsKey: string;
  readonly errorRate: number;
  readonly latencyMs: number;
  readonly #seed: number;
  readonly #id: string;
  readonly #cfg: PtrueSimulation;

  constructor(opts: SimulatedPtrueRespondentOptions) {
    this.#seed = opts.seed;
    this.#id = opts.modelId;
    this.#cfg = opts.config;
    this.effectsKey = `ptrue|${opts.seed}|${opts.modelId}`;
    this.errorRate = opts.config.error_rate;
    this.latencyMs = opts.config.latency_ms;
  }

  reply(item: PromptItem, req: GenerateRequest): SimulatedReply {
    const p = item as PtrueItem;
    if (p.phase === PHASES.generate) return { text: this.generate(p) };
    if (p.phase === PHASES.verify) return this.verify(p, req);
    throw new SimulatedRequestError(`simulated/${this.#id}: a model under test answers generate and verify items, not ${p.phase}`, this.#id);
  }

  #key(p: PtrueItem): ReplyKey {
    return { seed: this.#seed, model: this.#id, baseItem: p.factors.base_item, q: p.factors.question_language, r: p.factors.response_language };
  }

  /** The reply text of a generate item. */
  generate(p: PtrueItem): string {
    const k = this.#key(p);
    const t = replyTruth(this.#cfg, k, p.factors.kind, p.factors.content_language);
    const say = phrasesFor(t.realised);
    const pick = (n: number, what: string): number => Math.floor(uniformFromKey(`ptrue|${this.#seed}|${this.#id}|${p.item_id}|${what}`) * n);
    if (p.factors.kind === 'multiple_choice') {
      if (t.unextractable) return say.undecided;
      const count = p.extras.option_count ?? 4;
      const gold = OPTION_LETTERS.indexOf(p.extras.gold_letter as (typeof OPTION_LETTERS)[number]);
      const wrong = [...Array(count).keys()].filter((i) => i !== gold);
      const chosen = t.correct ? gold : wrong[pick(wrong.length, 'wrong-letter')]!;
      const options = p.extras.options?.[t.realised] ?? p.extras.options?.[k.q] ?? [];
      return `${OPTION_LETTERS[chosen]}. ${options[chosen] ?? ''} ${say.because}`.replace(/\s+/g, ' ').trim();
    }
    const accepted = [...Object.values(p.extras.answers), ...p.extras.aliases];
    if (t.correct) {
      const form = p.extras.answers[t.realised] ?? p.extras.answers.en ?? accepted[0] ?? '?';
      return say.answer(form);
    }
    const wrong = say.wrong.filter((w) => !mentionsAny(w, accepted) && !accepted.some((a) => mentionsAny(a, [w])));
    return say.answer(wrong[pick(wrong.length, 'wrong-answer')] ?? '?');
  }

  /** The first-token logprobs of a verify item's candidates, and the label as text. */
  verify(p: PtrueItem, req: GenerateRequest): SimulatedReply {
    const v = p.factors.verifier_language;
    const labels = p.extras.labels;
    if (v === null || labels === null) throw new SimulatedRequestError(`simulated/${this.#id}: verify item ${p.item_id} has no verifier language or labels`, this.#id);
    const k = this.#key(p);
    const t = replyTruth(this.#cfg, k, p.factors.kind, p.factors.content_language);
    const z = ptrueLogit(this.#cfg, k, v, t.correct);
    const all = { ...sideLogprobs(labels.true, logSigmoid(z)), ...sideLogprobs(labels.false, logSigmoid(-z)) };
    // vLLM returns the candidates it was asked about; a top-k reply lists what it lists (here: the labels).
    const asked = req.settings.candidate_logprobs ? Object.keys(req.settings.candidate_logprobs.tokens) : Object.keys(all);
    const logprobs = Object.fromEntries(asked.filter((s) => all[s] !== undefined).map((s) => [s, all[s]!]));
    return { text: z >= 0 ? (labels.true[0] ?? 'True') : (labels.false[0] ?? 'False'), logprobs };
  }
}
