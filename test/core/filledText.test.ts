import { describe, expect, it } from 'vitest';
import { filledMessage, filledTextOf } from '../../lib/core/filledText.js';
import { canonicalJson, listCanonicalJson, seededRandom, stableId } from '../../lib/core/hash.js';
import { boundPromptTokens, estimatePromptTokens } from '../../lib/pricing/pricing.js';
import type { ChatMessage } from '../../lib/core/types.js';
import { approximateTokensOf } from '../../lib/providers/simulated/approximateTokens.js';

/** The same message as a plain object: serialized and counted from its whole text. */
const plain = (m: ChatMessage): ChatMessage => ({ role: m.role, content: `${m.content}` });

// Pieces that exercise every path of the JSON escapes and the token counts: ASCII, escapes,
// control characters, dense scripts (Han, kana, Hangul, full-width), Thai, astral characters,
// and lone surrogates.
const ALPHABET = ['a', 'Z', ' ', '"', '\\', '\n', '\t', '\u0001', '\u007f', 'é', '„', '不', 'ひ', 'カ', '한', 'Ａ', '、', 'ก', '😀', '𠀀', '\ud83d', '\ude00', '\u2028', '{{x}}'];

function randomPiece(random: () => number): string {
  let out = '';
  const n = Math.floor(random() * 12);
  for (let i = 0; i < n; i++) out += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return out;
}

describe('filledMessage', () => {
  it('is its pieces joined, frozen', () => {
    const m = filledMessage('user', ['Q: ', '\nA: ', ''], ['Why?', 'Because.']);
    expect(m).toEqual({ role: 'user', content: 'Q: Why?\nA: Because.' });
    expect(Object.isFrozen(m)).toBe(true);
    expect(filledTextOf(m)?.values).toEqual(['Why?', 'Because.']);
    expect(filledTextOf(plain(m))).toBeUndefined();
    expect(filledTextOf({ ...m })).toBeUndefined();
    expect(() => Object.assign(m, { content: 'changed' })).toThrow(TypeError);
    expect(() => filledMessage('user', ['a', 'b'], [])).toThrow('2 literals take 1 values, got 0');
  });

  it('serializes and counts from its pieces exactly as from its whole text', () => {
    const random = seededRandom(7);
    let keptAsPieces = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const literals = Array.from({ length: 1 + Math.floor(random() * 4) }, () => randomPiece(random));
      const values = literals.slice(1).map(() => randomPiece(random));
      const message = filledMessage(random() < 0.5 ? 'user' : 'system', literals, values);
      if (filledTextOf(message) !== undefined) keptAsPieces++;
      const whole = plain(message);
      expect(canonicalJson(message)).toBe(canonicalJson(whole));
      expect(canonicalJson(message)).toBe(JSON.stringify({ content: whole.content, role: whole.role }));
      expect(listCanonicalJson([message])).toBe(listCanonicalJson([whole]));
      expect(stableId({ messages: [message], n: trial })).toBe(stableId({ messages: [whole], n: trial }));
      for (const language of ['en', 'zh', 'th', 'ja']) expect(estimatePromptTokens([message], language)).toBe(estimatePromptTokens([whole], language));
      expect(boundPromptTokens([message])).toBe(boundPromptTokens([whole]));
      expect(approximateTokensOf([message])).toBe(approximateTokensOf([whole]));
    }
    // Most are kept as pieces; those whose pieces could join into one character are not.
    expect(keptAsPieces).toBeGreaterThan(2000);
    expect(keptAsPieces).toBeLessThan(3000);
  });

  it('is not kept as pieces where two pieces would join into one character', () => {
    // '\ud83d' + '\ude00' is one emoji: escaped, encoded and counted as one, not as two halves.
    const joined = filledMessage('user', ['x\ud83d', ''], ['\ude00']);
    expect(joined.content).toBe('x😀');
    expect(filledTextOf(joined)).toBeUndefined();
    expect(canonicalJson(joined)).toBe('{"content":"x😀","role":"user"}');
    expect(boundPromptTokens([joined])).toBe(boundPromptTokens([{ role: 'user', content: 'x😀' }]));
  });
});
