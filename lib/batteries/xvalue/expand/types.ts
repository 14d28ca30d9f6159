import type { GenerationSettings } from '../../../api/battery.js';
import type { PromptSet } from '../prompts/types.js';
import type { Language } from '../types.js';

/** One partition as the expansion sees it: who answers, in which language, with which settings. */
export interface ItemContext {
  readonly campaign: string;
  /** The campaign model id of the answerer (in X-Value every phase is answered by the model under test). */
  readonly model: string;
  readonly language: Language;
  /** The settings of the phase at hand, resolved by the core. */
  readonly settings: GenerationSettings;
  readonly prompts: PromptSet;
  /** The items are only counted and priced (PartitionContext.planning): their ids may be hashed on first read. */
  readonly planning?: boolean;
}
