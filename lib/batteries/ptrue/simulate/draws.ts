/**
 * The simulated truth of one reply: a pure function of the campaign seed, the model, the base item
 * and the condition, so the generate phase, the verify phase and the truth file agree without
 * sharing state.
 */
import { uniformFromKey } from '../../../api/battery.js';
import type { LanguageCode } from '../../../api/battery.js';
import type { PtrueSimulation } from './config.js';
import { logistic, normalFromUniforms } from './normal.js';

export interface ReplyKey {
  readonly seed: number;
  readonly model: string;
  readonly baseItem: string;
  readonly q: LanguageCode;
  readonly r: LanguageCode;
}

const key = (k: ReplyKey, what: string): string => `ptrue|${k.seed}|${k.model}|${k.baseItem}|${k.q}|${k.r}|${what}`;

/** The item's difficulty shift δ_i ~ N(0, item_spread²), the same for every condition. */
export function itemShift(seed: number, model: string, baseItem: string, spread: number): number {
  const k = `ptrue|${seed}|${model}|${baseItem}|difficulty`;
  return spread * normalFromUniforms(uniformFromKey(`${k}|u1`), uniformFromKey(`${k}|u2`));
}

const logit = (p: number): number => Math.log(p / (1 - p));

/**
 * P(correct) of a condition before the unextractable draw (config.ts). `shift` is the item's
 * difficulty shift (itemShift), which depends on the model and the base item only: a caller that
 * takes many conditions of one item (simulation_truth.json's cells) passes it in rather than
 * hashing it again for each.
 */
export function correctProbability(
  cfg: PtrueSimulation,
  k: ReplyKey,
  contentLanguage: string | null,
  shift: number = itemShift(k.seed, k.model, k.baseItem, cfg.item_spread),
): number {
  const x =
    logit(cfg.accuracy) +
    (cfg.question_language[k.q] ?? 0) +
    (cfg.response_language[k.r] ?? 0) +
    (contentLanguage !== null && k.q === contentLanguage && k.r === contentLanguage ? cfg.native_bonus : 0) +
    shift;
  return logistic(x);
}

export interface ReplyTruth {
  /** Whether the reply is correct (after the unextractable draw). */
  readonly correct: boolean;
  readonly unextractable: boolean;
  /** The language the reply is written in. */
  readonly realised: LanguageCode;
}

/** Compliance rate for a requested language. */
export const complianceFor = (cfg: PtrueSimulation, r: LanguageCode): number => cfg.compliance_by_language[r] ?? cfg.compliance;

/** The truth of one generate reply. */
export function replyTruth(cfg: PtrueSimulation, k: ReplyKey, kind: string, contentLanguage: string | null): ReplyTruth {
  const unextractable = kind === 'multiple_choice' && uniformFromKey(key(k, 'unextractable')) < cfg.unextractable_rate;
  const correct = !unextractable && uniformFromKey(key(k, 'correct')) < correctProbability(cfg, k, contentLanguage);
  const complies = uniformFromKey(key(k, 'language')) < complianceFor(cfg, k.r);
  const realised = complies ? k.r : k.r !== 'en' ? 'en' : k.q !== 'en' ? k.q : 'en';
  return { correct, unextractable, realised };
}

/** κ of a condition: discrimination plus the matching terms. */
export function kappaFor(cfg: PtrueSimulation, q: LanguageCode, r: LanguageCode, v: LanguageCode): number {
  return cfg.discrimination + (q === r ? cfg.matching.q_eq_r : 0) + (r === v ? cfg.matching.r_eq_v : 0) + (q === v ? cfg.matching.q_eq_v : 0);
}

/** The P(True) logit of a reply judged in verifier language v. */
export function ptrueLogit(cfg: PtrueSimulation, k: ReplyKey, v: LanguageCode, correct: boolean): number {
  const e = normalFromUniforms(uniformFromKey(key(k, `v=${v}|u1`)), uniformFromKey(key(k, `v=${v}|u2`)));
  return (cfg.verifier_bias[v] ?? 0) + kappaFor(cfg, k.q, k.r, v) * (correct ? 1 : -1) + cfg.noise * e;
}
