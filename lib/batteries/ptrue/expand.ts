/**
 * Item expansion of the three phases (Disentangling Question, Response, and Verifier Languages §3.2): pure functions from the plan, the partition
 * (model under test × question language) and, for the dependent phases, the generate items and
 * their replies, to PromptItems in a stable order.
 *
 * - generate: every base item × every response language r (6 × 6 = 36 conditions per base item
 *   over the six partitions), greedy, at most `max_tokens` new tokens, thinking as designed.
 * - verify: every generate reply × every verifier language v, the question (in q) and the reply
 *   held fixed, one token with the model's label candidates (§3.5).
 * - judge: every short-answer generate reply (and multiple choice when asked) once, answered by
 *   the judge role; its readings name the generate item (§4.2).
 *
 * Identity: a stable hash of battery, campaign, phase, the answering model, the partition (model
 * under test and language), the factors, the messages, the settings and the source item — so a
 * rerun gives the same ids and two subjects' equal replies stay two judge items.
 */
import { mergeSettings, stableId } from '../../api/battery.js';
import type { GenerationSettings, LanguageCode, ReplyView } from '../../api/battery.js';
import { itemIndex, type PtruePlan } from './plan.js';
import { generateMessages, judgeMessages, referenceFor, verifyMessages } from './prompts/messages.js';
import { PHASES, stratumOf, type BaseItem, type PtrueFactors, type PtrueItem } from './types.js';

export const BATTERY_NAME = 'ptrue';

/** The partition a phase is expanded for, as far as expansion needs it. */
export interface ExpandContext {
  readonly campaign: string;
  /** Model under test (partition). */
  readonly subject: string;
  /** Who answers, with the settings resolved for this phase. */
  readonly answerer: { readonly id: string; readonly settings: GenerationSettings };
  /** Question language (partition). */
  readonly language: LanguageCode;
  /** Items only counted and priced (PartitionContext.planning): their ids are made on first read. */
  readonly planning?: boolean | undefined;
}

/** What an item's id is a stable hash of (see the module's comment). */
function identity(ctx: ExpandContext, phase: string, factors: PtrueFactors, messages: PtrueItem['messages'], settings: GenerationSettings, source: string | undefined): object {
  return {
    battery: BATTERY_NAME,
    campaign: ctx.campaign,
    phase,
    model: ctx.answerer.id,
    subject: ctx.subject,
    language: ctx.language,
    factors,
    messages,
    settings,
    source: source ?? null,
  };
}

/**
 * An item of the plan: its id (the canonical JSON of its identity, hashed) is made on first read,
 * which the plan never does. Made eagerly, the ids were about half of the plan of the paper's full
 * design (~5 s of ~10 s). Getters on a class, not closures per item: a closure each is garbage
 * each.
 */
class PlanningItem implements PtrueItem {
  readonly battery = BATTERY_NAME;
  readonly campaign: string;
  readonly model: string;
  readonly language: LanguageCode;
  // Declared, not a field: absent unless the item has a source, as in the run's items.
  declare readonly source_item_id?: string;
  readonly #ctx: ExpandContext;
  #id?: string;

  constructor(
    ctx: ExpandContext,
    readonly phase: string,
    readonly factors: PtrueFactors,
    readonly messages: PtrueItem['messages'],
    readonly settings: GenerationSettings,
    readonly extras: PtrueItem['extras'],
    source: string | undefined,
  ) {
    this.#ctx = ctx;
    this.campaign = ctx.campaign;
    this.model = ctx.answerer.id;
    this.language = ctx.language;
    if (source !== undefined) this.source_item_id = source;
  }

  get item_id(): string {
    return (this.#id ??= stableId(identity(this.#ctx, this.phase, this.factors, this.messages, this.settings, this.source_item_id)));
  }

  // No repeats in this battery: one prompt, one item.
  get prompt_key(): string {
    return this.item_id;
  }
}

function makeItem(
  ctx: ExpandContext,
  phase: string,
  factors: PtrueFactors,
  messages: PtrueItem['messages'],
  settings: GenerationSettings,
  extras: PtrueItem['extras'],
  source?: string,
): PtrueItem {
  if (ctx.planning) return new PlanningItem(ctx, phase, factors, messages, settings, extras, source);
  const item_id = stableId(identity(ctx, phase, factors, messages, settings, source));
  return {
    item_id,
    // No repeats in this battery: one prompt, one item.
    prompt_key: item_id,
    campaign: ctx.campaign,
    phase,
    battery: BATTERY_NAME,
    model: ctx.answerer.id,
    language: ctx.language,
    factors,
    messages,
    settings,
    extras,
    ...(source !== undefined ? { source_item_id: source } : {}),
  };
}

/** The generate items of one partition: base items in file order, then response languages in design order. */
export function expandGenerate(plan: PtruePlan, ctx: ExpandContext): PtrueItem[] {
  const q = ctx.language;
  const out: PtrueItem[] = [];
  for (const base of plan.items) {
    if (base.question[q] === undefined) continue;
    for (const r of plan.languages) {
      const factors: PtrueFactors = {
        benchmark: base.benchmark,
        kind: base.kind,
        base_item: base.id,
        stratum: stratumOf(base),
        content_language: base.contentLanguage,
        question_language: q,
        response_language: r,
        verifier_language: null,
        thinking: plan.thinking,
        label_prefix: null,
      };
      const extras = {
        gold_letter: base.answerLetter,
        option_count: base.options ? (Object.values(base.options)[0]?.length ?? null) : null,
        reference: referenceFor(base, r),
        answers: base.answers,
        aliases: base.aliases,
        options: base.options,
        labels: null,
        languages: plan.languages,
      };
      out.push(makeItem(ctx, PHASES.generate, factors, generateMessages(base, q, r, plan.templates), ctx.answerer.settings, extras));
    }
  }
  return out;
}

/** Looks up the base item of a generate item (a plan built from another items file is a programming mistake). */
function baseOf(index: ReadonlyMap<string, BaseItem>, g: PtrueItem): BaseItem {
  const base = index.get(g.factors.base_item);
  if (!base) throw new RangeError(`no base item "${g.factors.base_item}" for ${g.item_id}`);
  return base;
}

/**
 * The verify items of one partition: each generate item with a reply that has text, times the
 * verifier languages. The model's probe settings are laid over the phase's settings.
 */
export function expandVerify(
  plan: PtruePlan,
  ctx: ExpandContext,
  generate: readonly PtrueItem[],
  reply: (itemId: string) => ReplyView | undefined,
): PtrueItem[] {
  const probe = plan.probes[ctx.subject];
  if (!probe) throw new RangeError(`no probe for model "${ctx.subject}"`);
  const index = itemIndex(plan.items);
  const settings = mergeSettings(ctx.answerer.settings, probe.settings);
  const out: PtrueItem[] = [];
  for (const g of generate) {
    const text = reply(g.item_id)?.text;
    if (text === undefined || text === null) continue;
    const base = baseOf(index, g);
    for (const v of plan.verifierLanguages) {
      const factors: PtrueFactors = { ...g.factors, verifier_language: v, label_prefix: probe.labels.prefix.length > 0 };
      const messages = verifyMessages(base, g.factors.question_language, v, text, plan.templates);
      out.push(makeItem(ctx, PHASES.verify, factors, messages, settings, { ...g.extras, labels: probe.labels }, g.item_id));
    }
  }
  return out;
}

/** Whether a generate item is judged (§4.1: short answers; multiple choice only when the design asks). */
export function isJudged(plan: Pick<PtruePlan, 'judgeMultipleChoice'>, g: PtrueItem): boolean {
  return g.factors.kind === 'short_answer' || plan.judgeMultipleChoice;
}

/** The judge items of one partition: one per judged generate reply with text. */
export function expandJudge(
  plan: PtruePlan,
  ctx: ExpandContext,
  generate: readonly PtrueItem[],
  reply: (itemId: string) => ReplyView | undefined,
): PtrueItem[] {
  const index = itemIndex(plan.items);
  const out: PtrueItem[] = [];
  for (const g of generate) {
    if (!isJudged(plan, g)) continue;
    const text = reply(g.item_id)?.text;
    if (text === undefined || text === null) continue;
    const base = baseOf(index, g);
    const messages = judgeMessages(base, g.factors.question_language, g.factors.response_language, text, plan.templates);
    out.push(makeItem(ctx, PHASES.judge, g.factors, messages, ctx.answerer.settings, g.extras, g.item_id));
  }
  return out;
}
