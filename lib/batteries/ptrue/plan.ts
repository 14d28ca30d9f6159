/**
 * What the phases of one campaign need, once its design is read: the base items, the languages,
 * the templates and each model's probe (built by load.ts; pure data, so expansion stays pure).
 */
import type { GenerationSettings, LanguageCode } from '../../api/battery.js';
import type { PromptTemplates } from './prompts/resolveTemplates.js';
import type { IdentifyLanguage } from './read/languageId.js';
import type { BaseItem } from './types.js';

/** How one model's verify replies are asked for and read. */
export interface ModelProbe {
  /** The settings the verify items of this model add (max_tokens 1 and candidate logprobs or a top-k). */
  readonly settings: GenerationSettings;
  /** The surface forms read on each side, and those that are only a label's first token. */
  readonly labels: { readonly true: readonly string[]; readonly false: readonly string[]; readonly prefix: readonly string[] };
  /** `candidates` (vLLM token ids, or a simulated model) or `top-k` (surface forms in the top-k). */
  readonly via: 'candidates' | 'top-k';
}

export interface PtruePlan {
  readonly campaign: string;
  readonly items: readonly BaseItem[];
  /** Question and response languages. */
  readonly languages: readonly LanguageCode[];
  readonly verifierLanguages: readonly LanguageCode[];
  readonly templates: PromptTemplates;
  readonly maxTokens: number;
  readonly thinking: 'off' | 'default';
  readonly judgeMultipleChoice: boolean;
  /** Per campaign model id (models under test). */
  readonly probes: Readonly<Record<string, ModelProbe>>;
  /** Whether the campaign gives the judge role (the judge phase exists only then). */
  readonly hasJudge: boolean;
  /** The realised-language identifier, loaded. */
  readonly identify: IdentifyLanguage;
}

/** Base items by id. */
export function itemIndex(items: readonly BaseItem[]): ReadonlyMap<string, BaseItem> {
  return new Map(items.map((i) => [i.id, i]));
}
