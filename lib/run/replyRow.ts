/**
 * The stored row of one attempt (ReplyRow), built the same way by the synchronous runner and the
 * batch runner: where the reply came from, its text and usage, what it cost. A hot path (one call
 * per attempt, millions in a large campaign), hence the fixed object shape and the cached stamp.
 */
import type { LanguageCode, PromptItem } from '../core/types.js';
import type { TokenUsage } from '../pricing/pricing.js';
import type { GenerateResult } from '../providers/types.js';
import type { ReplyRow } from '../store/types.js';
import { isEmptyReply } from './attemptVerdict.js';

// One ISO string per millisecond rather than one Date per reply.
let stampMs = 0;
let stamp = '';
function now(): string {
  const ms = Date.now();
  if (ms !== stampMs) {
    stampMs = ms;
    stamp = new Date(ms).toISOString();
  }
  return stamp;
}

/** What a stored reply row says about where it came from and how it is priced. */
export interface ReplySource {
  readonly campaign: string;
  readonly phase: string;
  readonly model: string;
  readonly language: LanguageCode;
  readonly providerId: string;
  readonly simulated: boolean;
  /** USD of one reply; `cached_input_tokens`, when present, at the cached-input price. */
  cost(usage: TokenUsage): number;
}

/** A call's outcome: a synchronous attempt and a batch result have this same shape. */
export type ReplyOutcome =
  | { readonly ok: true; readonly result: GenerateResult }
  | {
      readonly ok: false;
      readonly errorClass: string;
      readonly message: string;
      /** What the provider reported it used for an answer that is not a reply (a refusal, a filtered reply): billed, so priced. */
      readonly usage?: GenerateResult['usage'];
    };

/**
 * The stored row of one attempt, for the synchronous runner and the batch runner alike. One object
 * literal with a fixed key order for both outcomes: a million of these are built, and a single
 * shape keeps V8 on its fast path (spreading a base object was the hot spot).
 */
export function replyRow(
  src: ReplySource,
  item: PromptItem,
  o: ReplyOutcome,
  attempt: number,
  latencyMs: number,
  settingsJson: string,
): ReplyRow {
  const r = o.ok ? o.result : undefined;
  const usage = o.ok ? o.result.usage : o.usage;
  return {
    item_id: item.item_id,
    campaign: src.campaign,
    phase: src.phase,
    model: src.model,
    language: src.language,
    attempt,
    status: r ? (isEmptyReply(r) ? 'empty' : 'ok') : 'error',
    text: r ? r.text : null,
    finish_reason: r ? r.finish_reason : null,
    input_tokens: usage ? usage.input_tokens : 0,
    output_tokens: usage ? usage.output_tokens : 0,
    cached_input_tokens: usage?.cached_input_tokens ?? null,
    // The whole usage, cached tokens included: they are priced at the cached-input price.
    cost_usd: usage ? src.cost(usage) : 0,
    latency_ms: latencyMs,
    logprobs_json: r?.logprobs ? JSON.stringify(r.logprobs) : null,
    logprobs_exact: r?.logprobs ? Object.values(r.logprobs).every((l) => l.exact) : null,
    error_class: o.ok ? null : o.errorClass,
    error_message: o.ok ? null : o.message.slice(0, 500),
    settings_json: settingsJson,
    provider: src.providerId,
    simulated: src.simulated,
    created_at: now(),
  };
}
