import { describe, expect, it } from 'vitest';
import type { Far6Item } from '../../lib/batteries/far6/types.js';
import type { ChatMessage } from '../../lib/core/types.js';
import { boundPromptTokens, estimatePromptTokens, maxCostUsd, utf8Bytes } from '../../lib/pricing/pricing.js';
import { itemMaxCost } from '../../lib/run/planCampaign.js';

const PRICE = { input_per_mtok: 1, output_per_mtok: 4 };
const MESSAGES: ChatMessage[] = [{ role: 'user', content: 'Was what Finn did wrong? Answer yes or no.' }];

/** Only what the reservation reads of an item: its messages, language and settings. */
function item(settings: Far6Item['settings'], messages: readonly ChatMessage[] = MESSAGES, language = 'en'): Far6Item {
  return { messages, language, settings } as unknown as Far6Item;
}

/** Prompts in scripts whose older BPE vocabularies spend a token a character, or more. */
const SCRIPTS: Record<string, string> = {
  hi: 'क्या फ़िन ने जो किया वह गलत था? हाँ या नहीं में उत्तर दें।',
  ja: 'フィンのしたことは間違っていましたか？はいかいいえで答えてください。',
  ko: '핀이 한 일은 잘못이었습니까? 예 또는 아니오로 답하십시오.',
  th: 'สิ่งที่ฟินทำนั้นผิดหรือไม่ ตอบว่าใช่หรือไม่ใช่',
  emoji: 'Was it wrong? 🤔👍🏽 𝔂𝓮𝓼 or 𝓷𝓸',
};

describe('the reservation is a bound', () => {
  it('reserves the bound of the prompt (every UTF-8 byte and the chat overhead) and max_tokens at list price', () => {
    const it1 = item({ max_tokens: 50 });
    expect(itemMaxCost(it1, PRICE)).toBeCloseTo(maxCostUsd(PRICE, boundPromptTokens(MESSAGES), 50), 15);
    // 42 bytes of content, 4 of the role, 4 a message and 16 a request.
    expect(boundPromptTokens(MESSAGES)).toBe(42 + 4 + 4 + 16);
  });

  it.each(Object.entries(SCRIPTS))('%s: the bound is above a byte-level count with OpenAI overhead, a count per character, and the estimate', (language, text) => {
    const messages: ChatMessage[] = [{ role: 'system', content: 'You answer briefly.' }, { role: 'user', content: text }];
    const bytes = messages.reduce((s, m) => s + Buffer.byteLength(m.content, 'utf8') + 3, 3);
    const chars = messages.reduce((s, m) => s + [...m.content].length + 3, 3);
    expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, 'utf8'));
    expect(boundPromptTokens(messages)).toBeGreaterThanOrEqual(bytes);
    expect(boundPromptTokens(messages)).toBeGreaterThanOrEqual(chars);
    expect(boundPromptTokens(messages)).toBeGreaterThanOrEqual(estimatePromptTokens(messages, language === 'emoji' ? 'en' : language));
  });

  it('counts the bytes a request sends: a lone surrogate as the 3 of U+FFFD, a pair as 4', () => {
    for (const text of ['a\ud800', '\udc00b', '\ud800\ud800', '\ud83e\udd14', 'x\ud800y']) {
      expect(utf8Bytes(text), JSON.stringify(text)).toBe(new TextEncoder().encode(text).length);
    }
    expect(utf8Bytes('\ud800\ud800')).toBe(6);
    expect(utf8Bytes('\ud83e\udd14')).toBe(4);
  });

  it('a thinking budget above max_tokens is reserved as output', () => {
    expect(itemMaxCost(item({ max_tokens: 50, thinking: { budget_tokens: 2000 } }), PRICE)).toBeCloseTo(maxCostUsd(PRICE, boundPromptTokens(MESSAGES), 2000), 15);
  });

  it('with vLLM prompt_logprobs also reserves one scoring request per candidate (prompt + candidate in, one token out)', () => {
    const tokens = { ' Yes': 7414, ' No': 2360, ' yes': 10195 };
    const plain = item({ max_tokens: 50, candidate_logprobs: { tokens, method: 'logprob_token_ids' } });
    const scored = item({ max_tokens: 50, candidate_logprobs: { tokens, method: 'prompt_logprobs' } });
    const input = boundPromptTokens(MESSAGES);
    expect(itemMaxCost(plain, PRICE)).toBeCloseTo(maxCostUsd(PRICE, input, 50), 15);
    expect(itemMaxCost(scored, PRICE)).toBeCloseTo(maxCostUsd(PRICE, input, 50) + maxCostUsd(PRICE, input + 4, 1) + maxCostUsd(PRICE, input + 3, 1) + maxCostUsd(PRICE, input + 4, 1), 15);
  });
});
