import { describe, expect, it } from 'vitest';
import {
  costUsd,
  estimatePromptTokens,
  estimateTokens,
  maxCostUsd,
  PRICE_TABLE,
  priceFor,
} from '../../lib/pricing/pricing.js';
import type { PriceTable } from '../../lib/pricing/pricing.js';
import type { ChatMessage } from '../../lib/core/types.js';
import { SondageError } from '../../lib/errors.js';

describe('price table', () => {
  it('is versioned and prices the simulated provider at zero', () => {
    expect(PRICE_TABLE.version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(priceFor({ provider: 'simulated', model: 'anything' })).toEqual({ input_per_mtok: 0, output_per_mtok: 0 });
  });

  it('has a batch discount for every openai and anthropic entry, and output dearer than input', () => {
    const entries = Object.entries(PRICE_TABLE.prices).filter(([k]) => /^(openai|anthropic)\//.test(k));

    expect(entries.length).toBeGreaterThanOrEqual(6);
    for (const [key, price] of entries) {
      expect(price.batch_discount, key).toBe(0.5);
      expect(price.output_per_mtok, key).toBeGreaterThan(price.input_per_mtok);
      expect(price.cached_input_per_mtok ?? 0, key).toBeLessThan(price.input_per_mtok);
    }
  });
});

describe('priceFor', () => {
  const table: PriceTable = {
    version: '2026-01-01',
    prices: {
      'openai/gpt-x': { input_per_mtok: 1, output_per_mtok: 4, batch_discount: 0.5 },
      'vendor/*': { input_per_mtok: 9, output_per_mtok: 9 },
    },
  };

  it('prefers the campaign price over the table', () => {
    const own = { input_per_mtok: 2, output_per_mtok: 3 };
    expect(priceFor({ provider: 'openai', model: 'gpt-x', price: own }, table)).toBe(own);
  });

  it('looks up provider/model, then the model without a dated snapshot, then provider/*', () => {
    expect(priceFor({ provider: 'openai', model: 'gpt-x' }, table)?.output_per_mtok).toBe(4);
    expect(priceFor({ provider: 'openai', model: 'gpt-x-2025-04-14' }, table)?.output_per_mtok).toBe(4);
    expect(priceFor({ provider: 'openai', model: 'gpt-x-20251001' }, table)?.output_per_mtok).toBe(4);
    expect(priceFor({ provider: 'vendor', model: 'whatever' }, table)?.input_per_mtok).toBe(9);
  });

  it('returns undefined when nothing is known', () => {
    expect(priceFor({ provider: 'openai', model: 'gpt-y' }, table)).toBeUndefined();
    expect(priceFor({ provider: 'anthropic', model: 'gpt-x' }, table)).toBeUndefined();
  });

  it('finds real table entries through their snapshot names', () => {
    expect(priceFor({ provider: 'anthropic', model: 'claude-haiku-4-5-20251001' })).toEqual(
      PRICE_TABLE.prices['anthropic/claude-haiku-4-5'],
    );
  });
});

describe('estimateTokens', () => {
  it('divides Latin text by the language rate, rounding up', () => {
    expect(estimateTokens('Was what Finn did wrong?', 'en')).toBe(6); // 24 / 4
    expect(estimateTokens('abcde', 'en')).toBe(2);
    expect(estimateTokens('War das falsch?', 'de')).toBe(5); // 15 / 3.3 = 4.5
    expect(estimateTokens("Était-ce mal?", 'fr')).toBe(4); // 13 / 3.5 = 3.7
    expect(estimateTokens('', 'en')).toBe(0);
  });

  it('counts one token per Han, kana and Hangul character and per CJK punctuation mark', () => {
    expect(estimateTokens('芬恩做错了吗？', 'zh')).toBe(7);
    expect(estimateTokens('フィンは間違っていましたか。', 'ja')).toBe(14);
    expect(estimateTokens('핀이 한 일은 잘못이었나요?', 'ko')).toBe(11 + 2); // 11 Hangul, 3 spaces + "?" / 3.5
  });

  it('mixes scripts: letters inside CJK text go by the language rate', () => {
    expect(estimateTokens('答案：A或B', 'zh')).toBe(4 + 1); // 答 案 ： 或, then ceil(2 / 3.5) for A and B
  });

  it('counts text with no character from U+1100 up by its length, and the first dense one still counts one', () => {
    // Greek, Cyrillic, Thai, Georgian (U+10FF): all below U+1100, none dense.
    expect(estimateTokens('Ωμέγα Жж ไทย \u10ff', 'en')).toBe(4); // 14 characters / 4
    expect(estimateTokens('ab\u1100', 'ko')).toBe(1 + 1); // U+1100, a Hangul jamo, is dense; ceil(2 / 3.5)
    expect(estimateTokens('ab\u2026', 'en')).toBe(1); // an ellipsis: not dense, ceil(3 / 4)
    expect(estimateTokens('a\u{20000}', 'zh')).toBe(1 + 1); // a Han character beyond the BMP
  });

  it('never estimates below the characters of a dense script', () => {
    const text = '对'.repeat(100);
    expect(estimateTokens(text, 'zh')).toBe(100);
    expect(estimateTokens(text, 'en')).toBe(100);
  });

  it('adds the chat format overhead for prompts', () => {
    const messages = [
      { role: 'system' as const, content: 'abcd' },
      { role: 'user' as const, content: 'abcdefgh' },
    ];
    expect(estimatePromptTokens(messages, 'en')).toBe(3 + (4 + 1) + (4 + 2));
    expect(estimatePromptTokens([], 'en')).toBe(3);
  });

  it('keeps the estimate of a frozen message list only, per language', () => {
    const text = 'Was what Finn did wrong? '.repeat(8);
    const open: ChatMessage[] = [{ role: 'user', content: text }];
    const first = estimatePromptTokens(open, 'en');
    open.push({ role: 'assistant', content: text });
    // A list that can change is estimated anew.
    expect(estimatePromptTokens(open, 'en')).toBeGreaterThan(first);
    const half = { role: 'user' as const, content: text };
    const frozenList = Object.freeze([half]);
    expect(estimatePromptTokens(frozenList, 'en')).toBe(first);
    // Its message could still change: not kept.
    half.content = `${text}${text}`;
    expect(estimatePromptTokens(frozenList, 'en')).toBeGreaterThan(first);
    const frozen = Object.freeze([Object.freeze({ role: 'user' as const, content: text })]);
    const en = estimatePromptTokens(frozen, 'en');
    expect(estimatePromptTokens(frozen, 'en')).toBe(en);
    // Another language's characters per token: estimated for it, not the kept English figure.
    const de = estimatePromptTokens([{ role: 'user', content: text }], 'de');
    expect(de).not.toBe(en);
    expect(estimatePromptTokens(frozen, 'de')).toBe(de);
    // A frozen message in a list that can change (the judge's shared system message): the list is estimated anew.
    const shared = Object.freeze({ role: 'system' as const, content: text });
    const user = { role: 'user' as const, content: 'short' };
    const mixed: ChatMessage[] = [shared, user];
    expect(estimatePromptTokens(mixed, 'en')).toBe(estimatePromptTokens([{ ...shared }, { ...user }], 'en'));
    user.content = text;
    expect(estimatePromptTokens(mixed, 'en')).toBe(estimatePromptTokens([{ ...shared }, { ...user }], 'en'));
    expect(estimatePromptTokens(mixed, 'de')).toBe(estimatePromptTokens([{ ...shared }, { ...user }], 'de'));
  });
});

describe('costUsd and maxCostUsd', () => {
  const price = { input_per_mtok: 0.4, output_per_mtok: 1.6, cached_input_per_mtok: 0.1, batch_discount: 0.5 };

  it('charges input and output at list price per million tokens', () => {
    expect(costUsd(price, { input_tokens: 1_000_000, output_tokens: 0 })).toBeCloseTo(0.4, 12);
    expect(costUsd(price, { input_tokens: 1000, output_tokens: 100 })).toBeCloseTo(0.00056, 12);
  });

  it('charges cached input tokens, a subset of the input, at the cached price', () => {
    // 600 uncached × 0.4 + 400 cached × 0.1 + 100 × 1.6 = 240 + 40 + 160 per million
    expect(costUsd(price, { input_tokens: 1000, output_tokens: 100, cached_input_tokens: 400 })).toBeCloseTo(0.00044, 12);
    const noCachePrice = { input_per_mtok: 0.4, output_per_mtok: 1.6 };
    expect(costUsd(noCachePrice, { input_tokens: 1000, output_tokens: 100, cached_input_tokens: 400 })).toBeCloseTo(0.00056, 12);
  });

  it('applies the batch discount only in batch mode, and list price where there is none', () => {
    const usage = { input_tokens: 1000, output_tokens: 100 };
    expect(costUsd(price, usage, { batch: true })).toBeCloseTo(0.00028, 12);
    expect(costUsd(price, usage, { batch: false })).toBeCloseTo(0.00056, 12);
    expect(costUsd({ input_per_mtok: 0.4, output_per_mtok: 1.6 }, usage, { batch: true })).toBeCloseTo(0.00056, 12);
  });

  it('is zero for the simulated provider', () => {
    const sim = priceFor({ provider: 'simulated', model: 'alpha' });
    expect(sim && costUsd(sim, { input_tokens: 5000, output_tokens: 5000 })).toBe(0);
  });

  it('refuses impossible usage', () => {
    expect(() => costUsd(price, { input_tokens: 10, output_tokens: 1, cached_input_tokens: 11 })).toThrow(SondageError);
    expect(() => costUsd(price, { input_tokens: -1, output_tokens: 1 })).toThrow(/input_tokens must be a finite count/);
    expect(() => costUsd(price, { input_tokens: 1, output_tokens: Number.NaN })).toThrow(/output_tokens/);
  });

  it('reserves prompt plus max_tokens at list price, ignoring cache and batch discounts', () => {
    expect(maxCostUsd(price, 200, 100)).toBeCloseTo((200 * 0.4 + 100 * 1.6) / 1e6, 15);
    expect(maxCostUsd({ input_per_mtok: 1, output_per_mtok: 5 }, 200, 100)).toBeCloseTo(0.0007, 15);
    expect(() => maxCostUsd(price, 10, -1)).toThrow(/maxTokens/);
  });

  it('never reserves less than a call within its bounds can cost', () => {
    const input = 321;
    const maxTokens = 200;
    const reserve = maxCostUsd(price, input, maxTokens);
    for (const output of [0, 1, 57, 199, 200]) {
      for (const cached of [0, 100, 321]) {
        for (const batch of [false, true]) {
          expect(costUsd(price, { input_tokens: input, output_tokens: output, cached_input_tokens: cached }, { batch })).toBeLessThanOrEqual(reserve);
        }
      }
    }
  });
});
