/**
 * The P(True) phase graph (DESIGN.md: "P(True): generate → verify × 6 verifier languages, and a
 * 1–5 judge after generate"), as PhaseSpecs over a loaded plan. Expansion and reading are the pure
 * functions of expand.ts and read/; this file only wires them to the battery contract.
 */
import { approximateTokens, approximateTokensOf } from '../../api/battery.js';
import type { PartitionContext, PhaseEstimate, PhaseSpec, PromptItem } from '../../api/battery.js';
import { expandGenerate, expandJudge, expandVerify, isJudged, type ExpandContext } from './expand.js';
import type { ModelProbe, PtruePlan } from './plan.js';
import { readGenerate, readJudge, readVerify } from './read/readers.js';
import { PHASES, type PtrueItem } from './types.js';

/** Expected reply lengths for the cost estimate: a letter and a brief explanation, or a short answer. */
export const EXPECTED_REPLY_TOKENS = { multiple_choice: 96, short_answer: 24 } as const;
/** The judge's settings layer: greedy, room for feedback and the verdict. */
export const JUDGE_SETTINGS = { temperature: 0, max_tokens: 512 } as const;
const EXPECTED_JUDGE_TOKENS = 120;

const ctxOf = (p: PartitionContext): ExpandContext => ({ campaign: p.campaign.name, subject: p.subject.id, answerer: p.answerer, language: p.language, planning: p.planning });
const asPtrue = (items: readonly PromptItem[]): readonly PtrueItem[] => items as readonly PtrueItem[];

/** How a dependent phase's calls are counted before its sources' replies exist. */
interface DependentCalls {
  /** Calls per source item (six verifier copies; one judge call). */
  readonly copies: number;
  /** Prompt tokens the phase's template adds to the question and the reply. */
  readonly extraPrompt: number;
  /** Expected output tokens a call. */
  readonly outputTokens: number;
  /** The longest a source reply can be: its max_tokens. */
  readonly maxReplyTokens: number;
  /**
   * The candidates scored beside each call by vLLM's `prompt_logprobs` method: one request each,
   * the call's prompt and the candidate in, one token out — paid like the call itself
   * (lib/run/cost.ts `itemMaxCost` reserves them too). None for other methods.
   */
  readonly scoring?: readonly string[];
}

/** Counts and tokens of a dependent phase before its sources' replies exist: each source reply is taken at its expected length. */
function estimateFrom(sources: readonly PtrueItem[], calls: DependentCalls): PhaseEstimate {
  const { copies, extraPrompt, outputTokens, maxReplyTokens } = calls;
  const scoring = calls.scoring ?? [];
  // Every request of a call reads its prompt; a scoring request reads its candidate too.
  const requests = 1 + scoring.length;
  const candidateTokens = scoring.reduce((sum, c) => sum + approximateTokens(c), 0);
  let inputTokens = 0;
  let maxIn = 0;
  for (const g of sources) {
    const question = approximateTokensOf(g.messages);
    // A reply is never longer than the most it may be: with max_tokens below the expected length
    // the estimate took more than the maximum, and the plan showed "est." above "max".
    inputTokens += copies * (requests * (question + Math.min(EXPECTED_REPLY_TOKENS[g.factors.kind], maxReplyTokens) + extraPrompt) + candidateTokens);
    maxIn += copies * (requests * (question + maxReplyTokens + extraPrompt) + candidateTokens);
  }
  const items = sources.length * copies;
  const output = items * (outputTokens + scoring.length);
  return { items, inputTokens, outputTokens: output, maxInputTokens: maxIn, maxOutputTokens: output };
}

/** The candidates a model's verify call scores in requests of their own (vLLM's `prompt_logprobs`); none otherwise. */
function scoredCandidates(probe: ModelProbe | undefined): readonly string[] {
  const candidates = probe?.settings.candidate_logprobs;
  return candidates?.method === 'prompt_logprobs' ? Object.keys(candidates.tokens) : [];
}

/** The phases of a campaign: generate and verify always, judge when the campaign gives the judge role. */
export function ptruePhases(plan: PtruePlan): PhaseSpec[] {
  const generate: PhaseSpec = {
    name: PHASES.generate,
    after: [],
    answeredBy: 'subject',
    // §3.4: greedy decoding, at most 256 new tokens, thinking disabled where a model has it.
    settings: { temperature: 0, max_tokens: plan.maxTokens, ...(plan.thinking === 'off' ? { thinking: 'off' as const } : {}) },
    expand: (p) => expandGenerate(plan, ctxOf(p)),
    read: (item, reply) => readGenerate(plan.identify, item as PtrueItem, reply),
    expectedOutputTokens: (item) => EXPECTED_REPLY_TOKENS[(item as PtrueItem).factors.kind],
  };
  const verifyOverhead = Math.max(...plan.verifierLanguages.map((v) => approximateTokens(plan.templates.verify[v] ?? '')));
  const verify: PhaseSpec = {
    name: PHASES.verify,
    after: [{ phase: PHASES.generate, take: ['reply'] }],
    answeredBy: 'subject',
    // One token with logprobs; each model's candidates are laid over this on its items (probe.ts).
    settings: { temperature: 0, max_tokens: 1, logprobs: true },
    expand: (p, up) => expandVerify(plan, ctxOf(p), asPtrue(p.items(PHASES.generate)), (id) => up.reply(PHASES.generate, id)),
    read: (item, reply) => readVerify(item as PtrueItem, reply),
    estimate: (p) =>
      estimateFrom(asPtrue(p.items(PHASES.generate)), {
        copies: plan.verifierLanguages.length,
        extraPrompt: verifyOverhead,
        outputTokens: 1,
        maxReplyTokens: plan.maxTokens,
        scoring: scoredCandidates(plan.probes[p.subject.id]),
      }),
    consumes: () => true,
  };
  if (!plan.hasJudge) return [generate, verify];
  const judgeOverhead = approximateTokens(plan.templates.judge) + 40;
  const judge: PhaseSpec = {
    name: PHASES.judge,
    after: [{ phase: PHASES.generate, take: ['reply'] }],
    answeredBy: { role: 'judge' },
    settings: JUDGE_SETTINGS,
    readingsOf: 'source',
    readingsFolder: PHASES.generate,
    verb: 'judging',
    expand: (p, up) => expandJudge(plan, ctxOf(p), asPtrue(p.items(PHASES.generate)), (id) => up.reply(PHASES.generate, id)),
    read: (item, reply) => [readJudge(item.model, reply.text)],
    estimate: (p) =>
      estimateFrom(
        asPtrue(p.items(PHASES.generate)).filter((g) => isJudged(plan, g)),
        { copies: 1, extraPrompt: judgeOverhead, outputTokens: EXPECTED_JUDGE_TOKENS, maxReplyTokens: plan.maxTokens },
      ),
    consumes: (source) => isJudged(plan, source as PtrueItem),
  };
  return [generate, verify, judge];
}
