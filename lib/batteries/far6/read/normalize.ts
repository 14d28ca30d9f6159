import type { Proposition } from '../types.js';
import { ReadingMapError } from './errors.js';
import type { MatchEntry } from './types.js';

/**
 * What is stripped before an opening is read: whitespace (and zero-width marks), markdown emphasis,
 * headings, quotes and list bullets, and opening quotes and brackets of the six languages' scripts
 * (NFKC has already turned full-width forms such as （ and ＊ into ASCII).
 */
const LEADING_JUNK =
  /^[\s\u200b-\u200d\u2060\ufeff*_#>`~\-•·"'“”„‟‘’‚‛«»‹›「」『』【】〈〉《》〔〕〖〗〝〞([{¿¡]+/u;

const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * Case-folds and normalises a surface form the same way for keys and replies: NFKC (full-width
 * letters, compatibility forms), lower case, curly apostrophes to `'`, runs of whitespace to one space.
 */
export function fold(text: string, lower = true): string {
  const nf = text.normalize('NFKC');
  return (lower ? nf.toLowerCase() : nf).replace(/[’‘ʼ]/g, "'").replace(/\s+/g, ' ');
}

/**
 * The folded opening of a reply with leading whitespace, markdown, quotes and brackets removed.
 * Only a head of `headLength` characters is folded (replies can be long; the rule reads the start),
 * unless stripping ate the whole head.
 */
export function foldedOpening(text: string, headLength: number, lower = true): string {
  const head = text.length > headLength ? text.slice(0, headLength) : text;
  const opening = fold(head, lower).replace(LEADING_JUNK, '');
  if (opening === '' && head.length < text.length) return fold(text, lower).replace(LEADING_JUNK, '');
  return opening;
}

/** True when `ch` is a letter, digit or combining mark. */
export function isWordChar(ch: string): boolean {
  return WORD_CHAR.test(ch);
}

/** True for characters of scripts written without spaces between words (or, for hangul, read so). */
export function isUnspacedChar(ch: string): boolean {
  return UNSPACED_SCRIPT.test(ch);
}

/**
 * Whether a key needs a word boundary after it: it does when it ends in a letter or digit of a
 * spaced script (Latin, also Cyrillic, Greek…), so that "yesterday" is not "yes"; keys ending in a
 * CJK, kana or hangul character, or in punctuation, do not (是的, はいそうです, 네요).
 */
export function needsBoundary(key: string): boolean {
  const last = Array.from(key).at(-1) ?? '';
  return isWordChar(last) && !isUnspacedChar(last);
}

/** Character (code point) at a code-unit index, or '' past the end. */
export function charAt(s: string, index: number): string {
  const cp = s.codePointAt(index);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

/** A longest-first prefix matcher over folded keys, bucketed by first code unit. */
export class PrefixMatcher<E extends { readonly key: string; readonly boundary: boolean }> {
  private readonly byFirst = new Map<string, E[]>();
  readonly maxKeyLength: number;

  constructor(entries: Iterable<E>) {
    let max = 0;
    for (const e of entries) {
      const first = e.key[0];
      if (first === undefined) continue;
      const bucket = this.byFirst.get(first);
      if (bucket) bucket.push(e);
      else this.byFirst.set(first, [e]);
      max = Math.max(max, e.key.length);
    }
    for (const bucket of this.byFirst.values()) bucket.sort((a, b) => b.key.length - a.key.length);
    this.maxKeyLength = max;
  }

  /** The longest entry that `s` carries at `pos` (with a boundary after it where the entry needs one). */
  match(s: string, pos = 0): E | undefined {
    const bucket = this.byFirst.get(s[pos] ?? '');
    if (!bucket) return undefined;
    for (const e of bucket) {
      if (!s.startsWith(e.key, pos)) continue;
      if (e.boundary && isWordChar(charAt(s, pos + e.key.length))) continue;
      return e;
    }
    return undefined;
  }
}

/**
 * Folds a reading map's tokens into matcher entries. Two surface forms that fold to the same key
 * with opposite propositions make the map unreadable, so they throw.
 */
export function foldTokens(
  tokens: Readonly<Record<string, Proposition>>,
  where: string,
): Map<string, MatchEntry> {
  const out = new Map<string, MatchEntry>();
  for (const [surface, side] of Object.entries(tokens)) {
    if (side !== 'P' && side !== 'notP') {
      throw new ReadingMapError(
        `${where}: tokens["${surface}"] is ${JSON.stringify(side)}; expected "P" or "notP"`,
      );
    }
    const key = fold(surface).trim();
    if (key === '') throw new ReadingMapError(`${where}: tokens has an empty key ("${surface}")`);
    const seen = out.get(key);
    if (seen && seen.side !== side) {
      throw new ReadingMapError(
        `${where}: tokens "${surface}" and another form both fold to "${key}" but stand for ${seen.side} and ${side}; remove one`,
      );
    }
    out.set(key, { key, side, boundary: needsBoundary(key) });
  }
  return out;
}
