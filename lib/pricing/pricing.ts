import { z } from 'zod';
import { filledTextOf, perTemplate } from '../core/filledText.js';
import { charsPerToken } from '../core/languages.js';
import type { ChatMessage, LanguageCode } from '../core/types.js';
import { SondageError } from '../errors.js';
import type { Price } from '../providers/types.js';
import priceTableJson from './prices.json' with { type: 'json' };

/** A list price, as the table and a campaign's `models[].price` give it. USD per million tokens. */
export interface ModelPrice extends Price {
  /** Price of prompt tokens served from the provider's prompt cache; list input price when absent. */
  readonly cached_input_per_mtok?: number;
}

export interface PriceTable {
  /** The date the table was compiled; plans and reports quote it next to the prices. */
  readonly version: string;
  readonly note?: string;
  /** Keyed `provider/model`; `provider/*` covers every model of that provider. */
  readonly prices: Readonly<Record<string, ModelPrice>>;
}

/** Token counts of one call, as adapters normalise them. */
export interface TokenUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  /** The part of `input_tokens` read from the prompt cache (a subset, not an addition). */
  readonly cached_input_tokens?: number;
}

/**
 * A price in US$ per million tokens: 0 (free, or charged otherwise), or from $0.001 to $10,000.
 * Below the range is a price per token written where a price per million belongs, which would let
 * the cap count a millionth of what is spent; above it nothing is sold, and a cost estimate
 * would become meaningless (1e308 made plan print "$Infinity").
 */
const MIN_PER_MTOK = 0.001;
const MAX_PER_MTOK = 10_000;
function perMillionTokens(description: string) {
  return z
    .number()
    .min(0)
    .max(MAX_PER_MTOK, { error: (iss) => `must be at most ${MAX_PER_MTOK} (US$ per million tokens), got ${String(iss.input)}` })
    .refine((v) => v <= 0 || v >= MIN_PER_MTOK, {
      error: (iss) => `${String(iss.input)} looks like a price per token; prices here are US$ per million tokens (×1,000,000 = ${+(Number(iss.input) * 1e6).toPrecision(6)}), or 0`,
    })
    .meta({ description: `${description}: 0, or ${MIN_PER_MTOK} to ${MAX_PER_MTOK}` });
}

/** Shared by the price table and the campaign file, so both accept the same shape. */
export const modelPriceSchema = z.strictObject({
  input_per_mtok: perMillionTokens('USD per million prompt tokens'),
  output_per_mtok: perMillionTokens('USD per million completion tokens'),
  batch_discount: z
    .number()
    .gt(0)
    .max(1)
    .optional()
    .meta({ description: "Fraction of the list price paid through the provider's batch API (0.5 for most)" }),
  cached_input_per_mtok: perMillionTokens('USD per million cached prompt tokens').optional(),
});

const priceTableSchema = z.strictObject({
  version: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  note: z.string().optional(),
  prices: z.record(z.string().regex(/^[a-z0-9-]+\/[^/\s]+$/), modelPriceSchema),
});

function loadPriceTable(raw: unknown): PriceTable {
  const parsed = priceTableSchema.safeParse(raw);
  if (!parsed.success) {
    // The table ships with the code; a bad entry is a programming mistake, caught by the tests.
    throw new SondageError(`lib/providers/prices.json is malformed: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** The bundled price table (lib/providers/prices.json), validated once at load. */
export const PRICE_TABLE: PriceTable = loadPriceTable(priceTableJson);

// Dated snapshots cost what their alias costs: `gpt-4.1-mini-2025-04-14`, `claude-haiku-4-5-20251001`.
const SNAPSHOT_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8})$/;

/**
 * The price of a model: the campaign's own `price` when it gives one, else the table's entry for
 * `provider/model`, then for the model without a dated snapshot suffix, then `provider/*`.
 * Returns undefined when nothing is known (the campaign parser then asks for a price).
 * @example priceFor({ provider: 'openai', model: 'gpt-4.1-mini' })?.input_per_mtok === 0.4
 */
export function priceFor(
  entry: { readonly provider: string; readonly model: string; readonly price?: ModelPrice },
  table: PriceTable = PRICE_TABLE,
): ModelPrice | undefined {
  if (entry.price) return entry.price;
  const { provider, model } = entry;
  const keys = [`${provider}/${model}`, `${provider}/${model.replace(SNAPSHOT_SUFFIX, '')}`, `${provider}/*`];
  for (const key of keys) {
    const price = table.prices[key];
    if (price) return price;
  }
  return undefined;
}

// Whole BMP blocks that hold DENSE_SCRIPT's characters, as numbers: the hot path of planning a
// million items. They hold 22 code points the pattern does not: U+3099–U+309C, U+30A0, U+30FB and
// U+30FC (kana marks of the Common and Inherited scripts), and the unassigned U+3040, U+3097–U+3098
// and U+D7A4–U+D7AF. Those count as dense, which leans the estimate high, as it is meant to. Other
// characters from U+1100 up go to the pattern.
function isDense(c: number): boolean {
  return (
    (c >= 0x4e00 && c <= 0x9fff) || // CJK unified ideographs
    (c >= 0xac00 && c <= 0xd7af) || // Hangul syllables
    (c >= 0x3000 && c <= 0x30ff) || // CJK punctuation, hiragana, katakana
    (c >= 0xff00 && c <= 0xffef) || // full-width forms
    DENSE_SCRIPT.test(String.fromCharCode(c))
  );
}

/** Any UTF-16 code unit from U+1100 up (surrogates included): below it, no character is dense. */
const FROM_U1100 = /[\u1100-\uffff]/;

const DENSE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u;

/**
 * A planning estimate of the tokens in `text`, without a tokenizer: one token per Han, kana or
 * Hangul character and per CJK or full-width punctuation mark (current tokenizers use about 0.6-1.0
 * per Han character and about 1 per Hangul syllable), plus the other characters divided by the
 * language's characters per token (lib/core/languages.ts: en 4, de 3.3, fr 3.5, zh/ja/ko 3.5 for
 * their Latin parts, Thai 1.5, …), rounded up. It leans high on
 * purpose: the budget reserves `prompt + max_tokens` before each call, and settles the real count.
 * @example estimateTokens('Was what Finn did wrong?', 'en') === 6
 */
export function estimateTokens(text: string, language: LanguageCode): number {
  const counts = textCounts(text);
  return counts.dense + Math.ceil(counts.other / charsPerToken(language));
}

/** What estimateTokens counts in a text: its dense characters and the others. */
interface TextCounts {
  readonly dense: number;
  readonly other: number;
}

function textCounts(text: string): TextCounts {
  // Text with no character from U+1100 up (most Latin-script prompts) has no dense one: its length
  // counts, found by one native scan instead of a loop over every character.
  if (!FROM_U1100.test(text)) return { dense: 0, other: text.length };
  let dense = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x1100) other += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      // A surrogate pair: test the whole code point (Han extensions live above U+FFFF).
      const ch = String.fromCodePoint(text.codePointAt(i)!);
      if (DENSE_SCRIPT.test(ch)) dense += 1;
      else other += 1;
      i++;
    } else if (isDense(c)) dense += 1;
    else other += 1;
  }
  return { dense, other };
}

/** What estimateTokens and utf8Bytes count in all the literals of a template, together. */
interface LiteralCounts extends TextCounts {
  readonly utf8: number;
}

/** LiteralCounts per template (FilledText.literals), counted once for all its prompts. */
const countsOfLiterals = perTemplate((literals): LiteralCounts => {
  let dense = 0;
  let other = 0;
  let utf8 = 0;
  for (const literal of literals) {
    const c = textCounts(literal);
    dense += c.dense;
    other += c.other;
    utf8 += utf8Bytes(literal);
  }
  return { dense, other, utf8 };
});

/**
 * estimateTokens of a message's content. A filled template's (lib/core/filledText.ts) is counted
 * from its pieces, which gives the same number without flattening the content: the counts of
 * pieces that cannot join into one character add up to the whole text's.
 */
function contentTokens(m: ChatMessage, language: LanguageCode): number {
  const filled = filledTextOf(m);
  if (filled === undefined) return estimateTokens(m.content, language);
  const literals = countsOfLiterals(filled.literals);
  let dense = literals.dense;
  let other = literals.other;
  for (const value of filled.values) {
    const c = textCounts(value);
    dense += c.dense;
    other += c.other;
  }
  return dense + Math.ceil(other / charsPerToken(language));
}

/** utf8Bytes of a message's content, a filled template's from its pieces (contentTokens says why). */
function contentUtf8Bytes(m: ChatMessage): number {
  const filled = filledTextOf(m);
  if (filled === undefined) return utf8Bytes(m.content);
  let bytes = countsOfLiterals(filled.literals).utf8;
  for (const value of filled.values) bytes += utf8Bytes(value);
  return bytes;
}

/** Chat formats wrap each message in a few tokens (role, separators) and prime the reply. */
const TOKENS_PER_MESSAGE = 4;
const TOKENS_PER_REPLY_PRIMER = 3;

/**
 * Estimated prompt tokens of a chat request: the messages' text by `estimateTokens`, plus the
 * chat format's per-message overhead (4 tokens a message, 3 for the reply primer, as OpenAI
 * documents for its chat format).
 */
export function estimatePromptTokens(messages: readonly ChatMessage[], language: LanguageCode): number {
  const known = frozenPromptTokens.get(messages);
  if (known !== undefined && known.language === language) return known.tokens;
  let total = TOKENS_PER_REPLY_PRIMER;
  const listFrozen = Object.isFrozen(messages);
  let frozen = listFrozen;
  for (const m of messages) {
    const mFrozen = Object.isFrozen(m);
    // A frozen list is kept whole below; a frozen message of a list that can change, on its own.
    total += TOKENS_PER_MESSAGE + (mFrozen && !listFrozen ? frozenMessageTokens(m, language) : contentTokens(m, language));
    frozen &&= mFrozen;
  }
  if (frozen) frozenPromptTokens.set(messages, { language, tokens: total });
  return total;
}

/** A frozen message's estimate, kept: every judge prompt shares one 1.3 KB system message. */
function frozenMessageTokens(m: ChatMessage, language: LanguageCode): number {
  // A filled template is counted from its pieces: kept too, it would cost an entry per prompt.
  if (filledTextOf(m) !== undefined) return contentTokens(m, language);
  const known = frozenPromptTokens.get(m);
  if (known !== undefined && known.language === language) return known.tokens;
  const tokens = contentTokens(m, language);
  frozenPromptTokens.set(m, { language, tokens });
  return tokens;
}

/**
 * Estimates of frozen message lists (a frozen list of frozen messages cannot change, so its
 * estimate cannot go stale): an item's messages are estimated by the plan's count, its
 * reservation and the judge's estimate, and FAR-6's repeats share one list, so the ~1 KB scan ran
 * two to four times per prompt. Frozen messages of a list that is not frozen are kept one by one.
 */
const frozenPromptTokens = new WeakMap<readonly ChatMessage[] | ChatMessage, { readonly language: LanguageCode; readonly tokens: number }>();

/**
 * Chat formats wrap each message in special tokens around its role (OpenAI documents 3 a message and
 * 3 to prime the reply; Llama 3's template: a header start, the role, a header end and an end of
 * turn, with a begin-of-text and the assistant's header for the request). The bound takes 4 per
 * message plus the role's bytes, and 16 per request, above every format we know.
 */
export const BOUND_TOKENS_PER_MESSAGE = 4;
export const BOUND_TOKENS_PER_REQUEST = 16;

/**
 * UTF-8 bytes of a string, without encoding it (the hot path of a million reservations). Node's
 * count is native and ~10× faster than a loop over the characters in JavaScript for prompts of a
 * kilobyte; a lone surrogate counts 3, as the U+FFFD it is sent as.
 */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const boundTokens = new WeakMap<readonly ChatMessage[], number>();

/**
 * The most prompt tokens any byte-level tokenizer can count for a chat request: every byte of every
 * message's content and role is at most one token (a byte-level BPE never needs more; the older
 * vocabularies that spend a token per Devanagari, Hangul or Thai character spend fewer than the
 * character's three bytes), plus the chat format's overhead (BOUND_TOKENS_PER_MESSAGE,
 * BOUND_TOKENS_PER_REQUEST). The budget reserves this, so no honest provider's count can pass it;
 * `estimatePromptTokens` is the expectation the plan prices. Kept per frozen message list.
 * @example boundPromptTokens([{ role: 'user', content: 'Finn?' }]) === 5 + 4 + 4 + 16
 */
export function boundPromptTokens(messages: readonly ChatMessage[]): number {
  const known = boundTokens.get(messages);
  if (known !== undefined) return known;
  let total = BOUND_TOKENS_PER_REQUEST;
  for (const m of messages) total += BOUND_TOKENS_PER_MESSAGE + utf8Bytes(m.role) + contentUtf8Bytes(m);
  if (Object.isFrozen(messages) && messages.every((m) => Object.isFrozen(m))) boundTokens.set(messages, total);
  return total;
}

function assertCount(name: string, n: number): void {
  if (!Number.isFinite(n) || n < 0) throw new SondageError(`${name} must be a finite count ≥ 0, got ${n}`);
}

/**
 * What a call cost in USD (its tokens, plus `per_request_usd` where the price has one). Cached prompt tokens are a subset of `input_tokens` and are charged at
 * `cached_input_per_mtok` when the price has one. With `batch: true` the total is multiplied by
 * `batch_discount`; a price without one is charged at list price (never less than it cost).
 * @example costUsd({ input_per_mtok: 0.4, output_per_mtok: 1.6 }, { input_tokens: 1000, output_tokens: 100 }) // 0.00056
 */
export function costUsd(price: ModelPrice, usage: TokenUsage, options: { readonly batch?: boolean } = {}): number {
  const cached = usage.cached_input_tokens ?? 0;
  assertCount('input_tokens', usage.input_tokens);
  assertCount('output_tokens', usage.output_tokens);
  assertCount('cached_input_tokens', cached);
  if (cached > usage.input_tokens) {
    throw new SondageError(
      `cached_input_tokens (${cached}) exceeds input_tokens (${usage.input_tokens}); cached tokens are part of the input`,
    );
  }
  const list =
    (usage.input_tokens - cached) * price.input_per_mtok +
    cached * (price.cached_input_per_mtok ?? price.input_per_mtok) +
    usage.output_tokens * price.output_per_mtok;
  const factor = options.batch ? (price.batch_discount ?? 1) : 1;
  return (list * factor) / 1_000_000 + (price.per_request_usd ?? 0) * factor;
}

/**
 * The most a call can cost, which the budget reserves before sending it (DESIGN.md "Cost and
 * safety rails"): the prompt's tokens plus `max_tokens` of output, at list price, with no cache or
 * batch discount.
 * @example maxCostUsd({ input_per_mtok: 1, output_per_mtok: 5 }, 200, 100) // 0.0007
 */
export function maxCostUsd(price: ModelPrice, inputTokens: number, maxTokens: number): number {
  assertCount('inputTokens', inputTokens);
  assertCount('maxTokens', maxTokens);
  return (inputTokens * price.input_per_mtok + maxTokens * price.output_per_mtok) / 1_000_000 + (price.per_request_usd ?? 0);
}
