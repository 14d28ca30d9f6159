import { stableId } from '../../../api/battery.js';
import type { ChatMessage, GenerationSettings } from '../../../api/battery.js';
import { renderPrompt } from '../prompts/renderPrompt.js';
import type { Language, PhaseName, QaPair, XvalueExtras, XvalueFactors, XvalueItem } from '../types.js';
import { pairsIn } from './pairIndex.js';
import type { ItemContext } from './types.js';

export const BATTERY = 'xvalue';

/**
 * One item. Its id hashes everything that defines the request — battery, campaign, phase, model,
 * language, factors, messages and settings — so a rerun finds the same ids, and a changed
 * template or setting makes new items without touching the replies of the old ones. X-Value has
 * no repeats, so the prompt key is the item id.
 */
export function buildItem(ctx: ItemContext, phase: PhaseName, pair: QaPair, factors: XvalueFactors, messages: readonly ChatMessage[], opts: BuildOptions = {}): XvalueItem {
  const { sourceItemId, extras = extrasOf(pair) } = opts;
  if (ctx.planning && sourceItemId === undefined) return new PlanningItem(ctx.campaign, phase, ctx.model, ctx.language, factors, messages, ctx.settings, extras);
  const item_id = itemIdOf(ctx.campaign, phase, ctx.model, ctx.language, factors, messages, ctx.settings);
  return {
    item_id,
    prompt_key: item_id,
    campaign: ctx.campaign,
    phase,
    battery: BATTERY,
    model: ctx.model,
    language: ctx.language,
    factors,
    messages,
    settings: ctx.settings,
    extras,
    ...(sourceItemId === undefined ? {} : { source_item_id: sourceItemId }),
  };
}

function itemIdOf(campaign: string, phase: string, model: string, language: Language, factors: XvalueFactors, messages: readonly ChatMessage[], settings: GenerationSettings): string {
  return stableId({ battery: BATTERY, campaign, phase, model, language, factors, messages, settings });
}

/** What buildItem takes beyond the request. */
export interface BuildOptions {
  /** A dependent item's source: the step-1 item a step-2 item continues. */
  readonly sourceItemId?: string;
  /** The pair's extras (extrasOf), when several items of the pair share one object. */
  readonly extras?: XvalueExtras;
}

/**
 * The extras of a pair's items. The items of one pair in a partition share one object (step 3's
 * four checkpoints): the digest of the extras, which the prompts part, the readings' fingerprints
 * and their check hash for every item, is kept with the object (core/hash cachedDigest), so the
 * four cost one hash of the pair's answer instead of four.
 */
export function extrasOf(pair: QaPair): XvalueExtras {
  return { gold: pair.annotation, answer: pair.answer };
}

/**
 * An item of the plan (ItemContext.planning), which only counts and prices it: its id, a SHA-256
 * of the whole request, is hashed on first read instead of for every item (a fifth of the plan's
 * time at 100,000 pairs). Its fields are what buildItem gives, the id a getter on the class, not
 * an own property: a spread copy would lose it, which is why only the plan gets these.
 */
class PlanningItem implements XvalueItem {
  readonly battery = BATTERY;
  #id?: string;

  constructor(
    readonly campaign: string,
    readonly phase: PhaseName,
    readonly model: string,
    readonly language: Language,
    readonly factors: XvalueFactors,
    readonly messages: readonly ChatMessage[],
    readonly settings: GenerationSettings,
    readonly extras: XvalueExtras,
  ) {}

  get item_id(): string {
    return (this.#id ??= itemIdOf(this.campaign, this.phase, this.model, this.language, this.factors, this.messages, this.settings));
  }

  get prompt_key(): string {
    return this.item_id;
  }
}

/** The pairs of the partition's language, in data order. */
export function pairsOf(pairs: readonly QaPair[], ctx: ItemContext): readonly QaPair[] {
  return pairsIn(pairs, ctx.language);
}

/**
 * One item per pair of the partition's language, the prompt filled with the pair alone: the
 * definition-only prompt and rubric step 1 are built alike and differ only in the prompt and the
 * strategy they belong to (steps 2 and 3 depend on earlier readings and are built apart).
 */
export function* onePerPair(ctx: ItemContext, pairs: readonly QaPair[], prompt: 'defonly' | 'step1'): Generator<XvalueItem> {
  const strategy = prompt === 'defonly' ? 'defonly' : 'rubric';
  for (const pair of pairsOf(pairs, ctx)) {
    const messages = renderPrompt(ctx.prompts, prompt, ctx.language, pair.category, { question: pair.question, answer: pair.answer });
    const factors: XvalueFactors = { qa_id: pair.id, category: pair.category, strategy, prompt_id: prompt, checkpoint: null, nature_used: null, scope_used: null };
    yield buildItem(ctx, prompt, pair, factors, messages);
  }
}
