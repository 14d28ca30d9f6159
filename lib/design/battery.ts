import type { GenerationSettings, LanguageCode as Language, PromptItem } from '../core/types.js';
import type { ReadingLabel, StoryGroup } from '../batteries/far6/types.js';
import type { PromptColumns } from '../store/schemas.js';
import type { SimulatorFactory } from '../providers/simulated/types.js';

/** A reading produced without a model call (the fixed token rules). */
export interface RuleReading {
  readonly reader: string;
  readonly label: ReadingLabel;
  readonly raw: string | null;
}

export interface BatteryModel {
  readonly id: string;
  readonly settings: GenerationSettings;
}

/**
 * What the run needs from a battery once its design and data are loaded: the items of the first
 * phase per model and language, the readers that apply to a reply, and the dependent judge phase.
 * `far6` implements it now; `xvalue` (a rubric chain) and `ptrue` (generate, then probe logits)
 * add phases through `followUps` the same way the judge phase is added here.
 */
export interface LoadedBattery {
  readonly name: string;
  readonly languages: readonly Language[];
  readonly stories: readonly { readonly id: string; readonly group: StoryGroup }[];
  /** The battery's columns of the prompts table. */
  readonly prompts: PromptColumns;
  /** Its simulated models. */
  readonly simulator?: SimulatorFactory;
  /** Items of the generate phase for one model and language, in a stable order. */
  expand(model: BatteryModel, language: Language): Iterable<PromptItem>;
  /** Fixed-rule readings of one reply (none for free sentences). */
  ruleReadings(item: PromptItem, text: string): RuleReading[];
  /** Whether the sentence judge reads this item's reply (seed 000 "Judged coverage"). */
  needsJudge(item: PromptItem): boolean;
  judgeItem(source: PromptItem, reply: { readonly text: string; readonly attempt: number }, judge: BatteryModel): PromptItem;
  readJudge(text: string): { readonly label: ReadingLabel; readonly raw: string };
}
