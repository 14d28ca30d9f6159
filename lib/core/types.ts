/**
 * The data contracts every battery shares (DESIGN.md "Data contracts"): chat messages, generation
 * settings, and the PromptItem, whose design factors and extras each battery types for itself.
 */

/** A language code as campaign files and storage paths write it (`en`, `zh`, `pt`). Data, not a union: each battery lists its own. */
export type LanguageCode = string;

/** The three campaign tables. */
export type TableName = 'prompts' | 'replies' | 'readings';

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** Every field optional: `mergeSettings` overlays campaign defaults, model and phase settings. */
export interface GenerationSettings {
  readonly temperature?: number;
  readonly top_p?: number;
  readonly max_tokens?: number;
  readonly seed?: number;
  readonly stop?: readonly string[];
  /** OpenAI-style reasoning effort; `none` where a model takes it. */
  readonly reasoning_effort?: 'none' | 'minimal' | 'low' | 'medium' | 'high';
  /** Anthropic extended thinking: off, or a token budget. */
  readonly thinking?: 'off' | { readonly budget_tokens: number };
  /** Ask for first-token log-probabilities (probes). */
  readonly logprobs?: boolean;
  readonly top_logprobs?: number;
  /** vLLM (`openai-compatible`) only: the first-token logprobs of given candidate tokens. */
  readonly candidate_logprobs?: CandidateLogprobs;
  /**
   * vLLM (`openai-compatible`) only: keyword arguments of the model's chat template, sent as
   * `chat_template_kwargs`. `thinking: off` adds `enable_thinking: false` (Qwen3's switch) unless
   * these set it.
   */
  readonly chat_template_kwargs?: Readonly<Record<string, string | number | boolean>>;
}

/**
 * The first-token log-probabilities of named candidate tokens, through vLLM's extensions to the
 * chat API. `tokens` maps the surface form stored on the reply (` Yes`) to the model's token id.
 * `method`: `logprob_token_ids` (recent vLLM: every candidate's logprob, exact) or
 * `allowed_token_ids` (older vLLM: generation restricted to the candidates; each logprob read from
 * the top-k, exact when listed and otherwise only bounded above by the smallest one listed) or
 * `prompt_logprobs` (any vLLM: one extra request per candidate, the candidate appended to the
 * prompt as the start of the reply and its logprob read from vLLM's `prompt_logprobs`, exact).
 */
export interface CandidateLogprobs {
  readonly tokens: Readonly<Record<string, number>>;
  readonly method: 'logprob_token_ids' | 'allowed_token_ids' | 'prompt_logprobs';
}

/** One value of a battery's design factors: a typed column of its prompts table. */
export type FactorValue = string | number | boolean | null;
/** A battery's design factors of one item, flat and typed (FAR-6: story, form, constraint, …). */
export type FactorRecord = Readonly<Record<string, FactorValue>>;

/**
 * One request, fully resolved. `F` is the battery's factors, `X` its extras (what its readers and
 * simulator need beyond the factors, e.g. FAR-6's reading map).
 */
export interface PromptItem<F extends FactorRecord = FactorRecord, X = unknown> {
  /**
   * Stable hash of everything that defines the request, its factors included (the battery decides
   * the identity object). Stored replies, prompts parts and readings' fingerprints rely on it: what
   * the id does not cover, only `extras` may change without a new item (lib/run/readings.ts).
   */
  readonly item_id: string;
  /** The same without repeat-like factors: repeats share it. */
  readonly prompt_key: string;
  readonly campaign: string;
  /** A node of the battery's phase graph (a safe path segment). */
  readonly phase: string;
  readonly battery: string;
  /** The campaign model id of the entry that answers (the model under test, or a role's model such as the judge). */
  readonly model: string;
  readonly language: LanguageCode;
  readonly factors: F;
  readonly messages: readonly ChatMessage[];
  readonly settings: GenerationSettings;
  readonly extras: X;
  /** Items of a dependent phase: the item of an earlier phase whose reply this one reads or continues. */
  readonly source_item_id?: string;
}
