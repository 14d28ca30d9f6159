/**
 * The `simulation:` block of a simulated P(True) model (README "Simulated models"). Every parameter
 * is a known truth the analysis can be checked against.
 *
 * Correctness of a reply to base item i, question language q, requested language r:
 *   P(correct) = σ(logit(accuracy) + question_language[q] + response_language[r]
 *                  + native_bonus·[q = r = content language of i] + δ_i),  δ_i ~ N(0, item_spread²)
 * drawn once per (model, item, q, r); a multiple-choice reply is first made unextractable with
 * probability `unextractable_rate` (and is then incorrect).
 * Realised language: r with probability `compliance` (or `compliance_by_language[r]`), else
 * English (else the question language when English was requested).
 * P(True) of a reply in verifier language v: σ(z), z = verifier_bias[v] + κ·(2y − 1) + noise·N(0, 1),
 *   κ = discrimination + matching.q_eq_r·[q = r] + matching.r_eq_v·[r = v] + matching.q_eq_v·[q = v],
 * y the reply's true correctness: verifier_bias moves calibration only (the ordering, hence AUROC,
 * does not depend on it), discrimination and matching move AUROC = Φ(√2 κ / noise).
 */
import { z } from 'zod';
import { isLanguageCode, parseSimulationBlock } from '../../../api/battery.js';
import type { ConfigLocation } from '../../../api/battery.js';

// Keyed by language codes, as the design's languages are: a misspelt key would otherwise be kept
// and never drawn on, so the simulation would silently differ from what the file says.
const language = z.string().refine(isLanguageCode, { error: (iss) => `${JSON.stringify(iss.input)} is not a language code such as en, zh, fr, ja, ko, hi` });
const logitShift = z.number().min(-10).max(10);
const shift = z.record(language, logitShift);
const share = z.number().min(0).max(1);

export const ptrueSimulationSchema = z.strictObject({
  accuracy: z.number().gt(0).lt(1).default(0.6).describe('P(correct) with every shift 0'),
  question_language: shift.default({}).describe('logit shift of P(correct) per question language'),
  response_language: shift.default({}).describe('logit shift of P(correct) per requested response language'),
  native_bonus: z.number().min(-10).max(10).default(0).describe('logit shift when q = r = the item content language (LSQA alignment)'),
  item_spread: z.number().min(0).max(5).default(1).describe('sd of the item difficulty (logit)'),
  unextractable_rate: share.default(0.02).describe('multiple choice: share of replies with no option letter'),
  compliance: share.default(0.85).describe('share of replies in the requested language'),
  compliance_by_language: z.record(language, share).default({}),
  verifier_bias: shift.default({}).describe('calibration shift of the P(True) logit per verifier language'),
  discrimination: z.number().min(0).max(10).default(1).describe('κ: half the gap between correct and incorrect P(True) logits'),
  noise: z.number().gt(0).max(10).default(1).describe('sd of the P(True) logit'),
  matching: z
    .strictObject({ q_eq_r: logitShift.default(0), r_eq_v: logitShift.default(0), q_eq_v: logitShift.default(0) })
    .prefault({})
    .describe('added to κ when the languages match'),
  latency_ms: z.number().min(0).default(0),
  error_rate: share.default(0).describe('share of calls that fail with a transient error'),
});

export const ptrueJudgeSimulationSchema = z.strictObject({
  error_rate: share.default(0).describe('share of verdicts flipped (correct ↔ incorrect)'),
  malformed_rate: share.default(0).describe('share of outputs without a parseable [RESULT] n'),
  latency_ms: z.number().min(0).default(0),
  transient_error_rate: share.default(0),
});

export type PtrueSimulation = z.output<typeof ptrueSimulationSchema>;
export type PtrueJudgeSimulation = z.output<typeof ptrueJudgeSimulationSchema>;

/** A subject's block, defaults applied. @throws CampaignFileError naming the file and path. */
export const parsePtrueSimulation = (raw: unknown, where: ConfigLocation): PtrueSimulation => parseSimulationBlock(ptrueSimulationSchema, raw, where);
/** The judge's block. */
export const parsePtrueJudgeSimulation = (raw: unknown, where: ConfigLocation): PtrueJudgeSimulation => parseSimulationBlock(ptrueJudgeSimulationSchema, raw, where);
