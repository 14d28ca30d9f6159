/**
 * First-token probability of a binary verdict, shared by batteries (DESIGN.md "battery/: shared
 * readers … first-token probability"). P(True) (Disentangling Question, Response, and Verifier Languages §3.5, App. A; after Kadavath et al. 2022,
 * "Language Models (Mostly) Know What They Know") asks a model whether an answer is correct and
 * reads the first generated token's distribution over the label's token variants.
 *
 * The formula (Disentangling Question, Response, and Verifier Languages §3.5: "English True/False token variants supplied the max-logit P(True)
 * score"): with ℓ_T the largest log-probability among the True variants (`True`, ` True`, `true`, …)
 * and ℓ_F the largest among the False variants,
 *
 *     P(True) = exp ℓ_T / (exp ℓ_T + exp ℓ_F) = 1 / (1 + exp(ℓ_F − ℓ_T)).
 *
 * Log-probabilities of one position share their normaliser, so this equals the softmax of the two
 * largest logits ("max-logit"). Mass on other tokens, and on the other variants, is ignored.
 *
 * Exact or bounded: a logprob marked `exact: false` (lib/providers/openai: a candidate outside
 * vLLM's top-k under `allowed_token_ids`) is only an upper bound. A side whose largest entry is
 * exact is exact (every bounded variant lies below that bound, which lies below it). When one side
 * rests on a bound, P(True) is computed with the bound and is itself a bound: a lower bound when the
 * False side is bounded, an upper bound when the True side is. When both sides rest on bounds the
 * value says nothing: the reading is `invalid`. The reading's `raw` records which (JSON, below).
 *
 * Labels spanning several tokens (App. A: translated labels such as "Vrai", "正しい" may take more
 * than one token, and a first-token probability then scores only a prefix): the candidate is the
 * label's first token; the caller names those variants in `prefixOnly` and `raw` records them, so an
 * analysis can set such readings apart. A True and a False variant that share their first token
 * cannot be told apart at the first token at all; the caller must not list them (the battery checks
 * its token table when it loads), and this function refuses a surface form listed on both sides.
 */
import type { TokenLogprob } from '../../providers/types.js';
import type { ReadingDraft, ReplyView } from '../types.js';

/** The token variants of the two labels, as the reply's logprobs key them (surface forms). */
export interface LabelCandidates {
  readonly true: readonly string[];
  readonly false: readonly string[];
}

/** Whether a P(True) is exact, or a bound because one side rests on a top-k bound. */
export type ProbabilityBound = 'exact' | 'lower' | 'upper';

export type FirstTokenProbability =
  | {
      readonly ok: true;
      readonly p: number;
      readonly trueToken: string;
      readonly falseToken: string;
      readonly trueLogprob: number;
      readonly falseLogprob: number;
      readonly bound: ProbabilityBound;
    }
  | { readonly ok: false; readonly reason: 'no-logprobs' | 'no-true-candidate' | 'no-false-candidate' | 'both-bounded' };

interface Side {
  readonly token: string;
  readonly logprob: number;
  readonly exact: boolean;
}

/** The largest entry among a side's variants; an exact entry wins a tie with a bound. */
function bestOf(logprobs: Readonly<Record<string, TokenLogprob>>, variants: readonly string[]): Side | null {
  let best: Side | null = null;
  for (const token of variants) {
    if (!Object.hasOwn(logprobs, token)) continue;
    const lp = logprobs[token]!;
    if (!Number.isFinite(lp.logprob) && lp.logprob !== Number.NEGATIVE_INFINITY) continue;
    if (best === null || lp.logprob > best.logprob || (lp.logprob === best.logprob && lp.exact && !best.exact)) {
      best = { token, logprob: lp.logprob, exact: lp.exact };
    }
  }
  return best;
}

/**
 * P(True) from first-token logprobs keyed by surface form (see the module comment).
 * @example firstTokenProbability({ True: { logprob: -0.1, exact: true }, False: { logprob: -2.4, exact: true } }, { true: ['True'], false: ['False'] }) // p ≈ 0.909
 */
export function firstTokenProbability(
  logprobs: Readonly<Record<string, TokenLogprob>> | null | undefined,
  candidates: LabelCandidates,
): FirstTokenProbability {
  const overlap = candidates.true.find((t) => candidates.false.includes(t));
  if (overlap !== undefined) throw new RangeError(`firstTokenProbability: ${JSON.stringify(overlap)} is listed as both a True and a False variant`);
  if (!logprobs || Object.keys(logprobs).length === 0) return { ok: false, reason: 'no-logprobs' };
  const t = bestOf(logprobs, candidates.true);
  const f = bestOf(logprobs, candidates.false);
  if (t === null) return { ok: false, reason: 'no-true-candidate' };
  if (f === null) return { ok: false, reason: 'no-false-candidate' };
  if (!t.exact && !f.exact) return { ok: false, reason: 'both-bounded' };
  let p: number;
  if (t.logprob === Number.NEGATIVE_INFINITY && f.logprob === Number.NEGATIVE_INFINITY) return { ok: false, reason: 'both-bounded' };
  else if (t.logprob === Number.NEGATIVE_INFINITY) p = 0;
  else if (f.logprob === Number.NEGATIVE_INFINITY) p = 1;
  else p = 1 / (1 + Math.exp(f.logprob - t.logprob));
  return {
    ok: true,
    p,
    trueToken: t.token,
    falseToken: f.token,
    trueLogprob: t.logprob,
    falseLogprob: f.logprob,
    bound: t.exact && f.exact ? 'exact' : t.exact ? 'lower' : 'upper',
  };
}

/** The labels a first-token reading gives (its vocabulary). */
export const FIRST_TOKEN_LABELS = ['True', 'False', 'invalid'] as const;

export interface FirstTokenReadingOptions {
  /** The reader id (default `ptrue`). */
  readonly reader?: string;
  /** Variants whose label spans several tokens: the candidate is only their first token (App. A). */
  readonly prefixOnly?: readonly string[];
}

/**
 * The reading of one probe reply: label `True` when P(True) ≥ 0.5, else `False`; `invalid` with a
 * null value when the candidates are missing or both bounded. `raw` is JSON:
 * `{"p_true":0.909,"true":["True",-0.1],"false":["False",-2.4],"bound":"exact","prefix":[…]}`
 * (`bound`: `exact`, `lower` or `upper`; `prefix` only when a chosen variant is a label prefix),
 * or `{"invalid":"no-true-candidate"}`.
 */
export function readFirstTokenProbability(reply: ReplyView, candidates: LabelCandidates, options: FirstTokenReadingOptions = {}): ReadingDraft {
  const reader = options.reader ?? 'ptrue';
  const r = firstTokenProbability(reply.logprobs, candidates);
  if (!r.ok) return { reader, label: 'invalid', value: null, raw: JSON.stringify({ invalid: r.reason }) };
  const prefix = (options.prefixOnly ?? []).filter((v) => v === r.trueToken || v === r.falseToken);
  const raw = {
    p_true: r.p,
    true: [r.trueToken, r.trueLogprob],
    false: [r.falseToken, r.falseLogprob],
    bound: r.bound,
    ...(prefix.length > 0 ? { prefix } : {}),
  };
  return { reader, label: r.p >= 0.5 ? 'True' : 'False', value: r.p, raw: JSON.stringify(raw) };
}
