import { describe, expect, it } from 'vitest';
import type { Far6Item } from '../../lib/batteries/far6/types.js';
import { boundPromptTokens, maxCostUsd, utf8Bytes } from '../../lib/pricing/pricing.js';
import { itemMaxCost } from '../../lib/run/planCampaign.js';

const PRICE = { input_per_mtok: 1, output_per_mtok: 4 };

/** Only what the reservation reads of an item: its messages, language and settings. */
function item(settings: Far6Item['settings']): Far6Item {
  return { messages: [{ role: 'user', content: 'Was what Finn did wrong? Answer yes or no.' }], language: 'en', settings } as unknown as Far6Item;
}

describe('itemMaxCost', () => {
  it('reserves the prompt and max_tokens at list price', () => {
    const it1 = item({ max_tokens: 50 });
    expect(itemMaxCost(it1, PRICE)).toBeCloseTo(maxCostUsd(PRICE, boundPromptTokens(it1.messages), 50), 15);
  });

  it('with vLLM prompt_logprobs also reserves one scoring request per candidate (prompt + candidate in, one token out)', () => {
    const tokens = { ' Yes': 7414, ' No': 2360, ' yes': 10195 };
    const plain = item({ max_tokens: 50, candidate_logprobs: { tokens, method: 'logprob_token_ids' } });
    const scored = item({ max_tokens: 50, candidate_logprobs: { tokens, method: 'prompt_logprobs' } });
    const input = boundPromptTokens(scored.messages);
    // Each scoring request: the prompt, then the candidate as an assistant message.
    const scoring = Object.keys(tokens).reduce((s, c) => s + maxCostUsd(PRICE, input + boundPromptTokens([{ role: 'assistant', content: c }]), 1), 0);
    expect(itemMaxCost(plain, PRICE)).toBeCloseTo(maxCostUsd(PRICE, input, 50), 15);
    expect(itemMaxCost(scored, PRICE)).toBeCloseTo(maxCostUsd(PRICE, input, 50) + scoring, 15);
  });

  it.each([
    ['hi', 'आपने जो किया वह गलत था? हाँ या नहीं में उत्तर दें।'],
    ['ja', 'フィンのしたことは間違っていましたか？はいかいいえで答えてください。'],
    ['ko', '핀이 한 일은 잘못이었나요? 예 또는 아니요로 답하세요.'],
    ['th', 'สิ่งที่ฟินน์ทำผิดหรือไม่ ตอบใช่หรือไม่ใช่'],
  ])('in %s reserves at least the UTF-8 bytes a byte-level tokenizer can count, OpenAI chat overhead included', (language, text) => {
    const messages = [
      { role: 'system' as const, content: 'Answer in one word.' },
      { role: 'user' as const, content: text },
    ];
    const it1 = { messages, language, settings: { max_tokens: 50 } } as unknown as Far6Item;
    // The worst honest count: every byte a token, 3 per message, 3 for the reply primer (OpenAI's documented chat format).
    const worst = messages.reduce((s, m) => s + Buffer.byteLength(m.content) + 3, 3);
    expect(itemMaxCost(it1, PRICE)).toBeGreaterThanOrEqual(maxCostUsd(PRICE, worst, 50));
    // And one token per character, as older BPE vocabularies count these scripts.
    expect(itemMaxCost(it1, PRICE)).toBeGreaterThanOrEqual(maxCostUsd(PRICE, messages.reduce((s, m) => s + m.content.length + 3, 3), 50));
  });

  it('counts UTF-8 bytes as Buffer.byteLength does, astral characters included', () => {
    for (const s of ['abc', 'é', 'नमस्ते', '한국어', '𠀋𠀋', 'mixed ไทย 日本 😀']) expect(utf8Bytes(s)).toBe(Buffer.byteLength(s));
  });
});
