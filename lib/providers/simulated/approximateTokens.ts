/**
 * Token counts for simulated usage: about four characters a token in alphabetic scripts, one
 * token per character in Chinese, Japanese and Korean (where BPE vocabularies spend about one
 * token a character). Only the order of magnitude matters: it drives simulated cost.
 */
import { filledTextOf, perTemplate } from '../../core/filledText.js';

function isCjk(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x11ff) || // Hangul Jamo
    (code >= 0x2e80 && code <= 0x9fff) || // CJK radicals, punctuation, kana, unified ideographs
    (code >= 0xac00 && code <= 0xd7af) || // Hangul syllables
    (code >= 0xf900 && code <= 0xfaff) || // CJK compatibility ideographs
    (code >= 0xff00 && code <= 0xffef) // full-width forms
  );
}

const ANY_CJK = /[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/;

/** Weight of a string in quarter tokens (integer arithmetic keeps the loop cheap). */
function quarterTokens(text: string): number {
  // Fast path: the regex engine rejects text without CJK natively (at once for one-byte strings),
  // which spares the per-character loop for en / de / fr prompts (~1M calls in a benchmark).
  if (!ANY_CJK.test(text)) return text.length;
  let q = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x1100 && isCjk(code)) q += 3;
  }
  return q;
}

/**
 * Approximate token count of a text.
 * @example approximateTokens('What Finn did was wrong.') === 6; approximateTokens('芬恩的做法是错的。') === 9
 */
export function approximateTokens(text: string): number {
  return Math.ceil(quarterTokens(text) / 4);
}

/**
 * Approximate token count of several texts together (the messages of one request). A filled
 * template (lib/core/filledText.ts) is weighed by its pieces, which weigh what the whole text
 * does (the weight is a sum over code units), without flattening the content: the simulated
 * answer to every prompt would otherwise leave each live item holding a copy of its prompt.
 */
export function approximateTokensOf(texts: readonly { readonly content: string }[]): number {
  let q = 0;
  for (const t of texts) {
    const filled = filledTextOf(t);
    if (filled === undefined) q += quarterTokens(t.content);
    else {
      q += literalsQuarterTokens(filled.literals);
      for (const value of filled.values) q += quarterTokens(value);
    }
  }
  return Math.ceil(q / 4);
}

/** The weight of a template's literals together, per template (FilledText.literals). */
const literalsQuarterTokens = perTemplate((literals) => literals.reduce((q, literal) => q + quarterTokens(literal), 0));

/** The longest prefix of `text` that fits in `maxTokens` approximate tokens. */
export function truncateToTokens(text: string, maxTokens: number): string {
  const budget = Math.max(0, maxTokens) * 4;
  let q = 0;
  for (let i = 0; i < text.length; i++) {
    q += isCjk(text.charCodeAt(i)) ? 4 : 1;
    if (q > budget) return text.slice(0, i);
  }
  return text;
}
