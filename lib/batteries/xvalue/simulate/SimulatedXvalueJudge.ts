/**
 * A simulated model under test for X-Value (README.md "Simulated judges"): it answers every phase's
 * prompt as a judge with known error rates would. For each pair and strategy it first decides the
 * overall verdict — Fail with probability 1 − FNR on an inappropriate pair and FPR on an
 * appropriate one (trueRates.ts) — from a draw keyed by the campaign seed, the model and the
 * pair, so the def-only reply, and the step-2 and step-3 replies of the rubric, which are
 * separate calls, agree. For the rubric it then picks which checkpoints fail (the pair's
 * annotated failures, each with probability `checkpoint_recall`, at least one; for a false alarm
 * one of B–H at random) so that the one-vote veto over its replies gives the decided verdict.
 * Step 1 names the annotated scope and nature with the configured accuracies; a wrong nature
 * changes step 2's checklist, not the verdict. A share `invalid_rate` of replies is unreadable.
 */
import { SimulatedRequestError, uniformFromKey } from '../../../api/battery.js';
import type { GenerateRequest, PromptItem, SimulatedModel, SimulatedReply } from '../../../api/battery.js';
import { NATURES, QUESTION_LABELS, SCOPES, VETO_CHECKPOINTS, checkpointVerdict } from '../types.js';
import type { AnswerCheckpoint, Language, Nature, Scope, Strategy, Verdict, XvalueItem } from '../types.js';
import { UNREADABLE_REPLY, replyText } from './replyText.js';
import type { ReplyStyle, SimulatedAnswer } from './replyText.js';
import type { XvalueSimulation } from './simulationConfig.js';
import { profileSeedOf, ratesLookup } from './trueRates.js';

export interface SimulatedXvalueJudgeOptions {
  readonly seed: number;
  readonly modelId: string;
  /** The provider's model name, for messages. */
  readonly model: string;
  readonly config: XvalueSimulation;
}

/** The sentences of a text (split after . ! ? and their full-width forms, and the Arabic/Urdu full stop). */
export function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?。！？۔])\s*/u).map((s) => s.trim()).filter((s) => s !== '');
}

export class SimulatedXvalueJudge implements SimulatedModel {
  readonly effectsKey: string;
  readonly errorRate: number;
  readonly latencyMs: number;
  private readonly keyBase: string;
  /** trueRates of this model's profile, each computed once. */
  private readonly ratesOf: ReturnType<typeof ratesLookup>;

  constructor(private readonly opts: SimulatedXvalueJudgeOptions) {
    this.keyBase = `xvalue|${opts.seed}|${opts.modelId}|`;
    this.effectsKey = `${this.keyBase}effects`;
    this.errorRate = opts.config.error_rate;
    this.latencyMs = opts.config.latency_ms;
    this.ratesOf = ratesLookup(opts.config, profileSeedOf(opts.config, opts.modelId));
  }

  private u(...parts: readonly string[]): number {
    return uniformFromKey(`${this.keyBase}${parts.join('|')}`);
  }

  /** The overall verdict decided for a pair under a strategy (the same for every item of the pair). */
  decision(item: XvalueItem, strategy: Strategy): Verdict {
    const { category, qa_id } = item.factors;
    const rates = this.ratesOf(strategy, item.language as Language, category);
    const u = this.u(qa_id, strategy, 'decide');
    return item.extras.gold.overall === 'Fail' ? (u >= rates.fnr ? 'Fail' : 'Pass') : u < rates.fpr ? 'Fail' : 'Pass';
  }

  /** The checkpoints B–H the rubric fails on a pair (empty when it passes the pair). */
  failing(item: XvalueItem): ReadonlySet<AnswerCheckpoint> {
    if (this.decision(item, 'rubric') === 'Pass') return new Set();
    const gold = item.extras.gold;
    const qa = item.factors.qa_id;
    const annotated = VETO_CHECKPOINTS.filter((c) => checkpointVerdict(gold, c) === 'Fail');
    const pool = annotated.length > 0 ? annotated : VETO_CHECKPOINTS;
    const out = new Set(annotated.filter((c) => this.u(qa, c, 'recall') < this.opts.config.checkpoint_recall));
    if (out.size === 0) out.add(pool[Math.floor(this.u(qa, 'one') * pool.length)] as AnswerCheckpoint);
    return out;
  }

  private answer(item: XvalueItem): SimulatedAnswer {
    const gold = item.extras.gold;
    const qa = item.factors.qa_id;
    const cfg = this.opts.config;
    // Asked once per reply: step 2 reads three checkpoints off it.
    let failing: ReadonlySet<AnswerCheckpoint> | undefined;
    const fail = (c: AnswerCheckpoint): Verdict => ((failing ??= this.failing(item)).has(c) ? 'Fail' : 'Pass');
    switch (item.phase) {
      case 'defonly':
        return { phase: 'defonly', verdict: this.decision(item, 'defonly') };
      case 'step1': {
        const scope = this.u(qa, 'scope') < cfg.step1.scope ? gold.scope : (SCOPES.find((s) => s !== gold.scope) as Scope);
        const nature = this.u(qa, 'nature') < cfg.step1.nature ? gold.nature : (NATURES.find((n) => n !== gold.nature) as Nature);
        return { phase: 'step1', coreIssue: gold.core_issue, scope, nature };
      }
      case 'step2': {
        const others = QUESTION_LABELS.filter((l) => l !== gold.checkpoints.A);
        const a = this.u(qa, 'A') < cfg.question_accuracy ? gold.checkpoints.A : (others[Math.floor(this.u(qa, 'A-other') * others.length)] as (typeof others)[number]);
        return { phase: 'step2', a, b: fail('B'), c: fail('C'), d: fail('D') };
      }
      case 'step3': {
        const checkpoint = item.factors.checkpoint;
        if (checkpoint === null) throw new SimulatedRequestError(`simulated/${this.opts.model}: step3 item ${item.item_id} names no checkpoint`, `simulated/${this.opts.model}`);
        const verdict = fail(checkpoint);
        const annotated = gold.checkpoints[checkpoint];
        const sentences = verdict === 'Pass' ? [] : annotated.length > 0 ? annotated : sentencesOf(item.extras.answer).slice(0, 1);
        return { phase: 'step3', checkpoint, verdict, sentences };
      }
      default:
        throw new SimulatedRequestError(`simulated/${this.opts.model}: no X-Value phase "${item.phase}"`, `simulated/${this.opts.model}`);
    }
  }

  private style(item: XvalueItem): ReplyStyle {
    const s = this.opts.config.reply_style;
    if (s !== 'mixed') return s;
    return this.u(item.item_id, 'style') < 0.5 ? 'json' : 'lines';
  }

  /** The reply to one item: a pure function of the seed, the model, the item and the configuration. */
  reply(item: PromptItem, _req: GenerateRequest): SimulatedReply {
    const x = item as XvalueItem;
    if (x.battery !== 'xvalue' || x.extras?.gold === undefined) {
      throw new SimulatedRequestError(`simulated/${this.opts.model}: item ${item.item_id} is not an X-Value item`, `simulated/${this.opts.model}`);
    }
    if (this.u(x.item_id, 'invalid') < this.opts.config.invalid_rate) return { text: UNREADABLE_REPLY };
    return { text: replyText(this.answer(x), x.language as Language, this.style(x)) };
  }
}
