/**
 * Reading one value ("Fail: excuses the act", "不通过", "Regional.") as one label of a table.
 * A value is read when it *starts* with one of the label's words — the longest word that fits,
 * so 不通过 (Fail) beats 通过 (Pass) and "nicht bestanden" beats "bestanden" — and what follows
 * is a reason, not another choice: "Pass or Fail", "Pass/Fail", "通过或不通过" read as ambiguous.
 * In scripts written with spaces (Latin, Cyrillic, Arabic) the word must end at a word boundary,
 * so "passive" is not "pass" and "مناسبة" is not "مناسب"; in Chinese, Japanese, Korean and Thai,
 * which attach particles, it need not (통과입니다 reads 통과).
 */
import { fold, stripMarkup, trimValue } from './normalize.js';

/** A word list per label, folded and sorted longest first (built once per table). */
export interface LabelTable<L extends string> {
  readonly entries: readonly (readonly [word: string, label: L])[];
}

/** Builds a table from words per label; a word listed under two labels is a programming error. */
export function labelTable<L extends string>(words: Readonly<Record<L, readonly string[]>>): LabelTable<L> {
  const seen = new Map<string, L>();
  for (const [label, list] of Object.entries(words) as [L, readonly string[]][]) {
    for (const w of list) {
      const f = fold(w);
      const other = seen.get(f);
      if (other !== undefined && other !== label) throw new Error(`lexicon: "${w}" is listed under both ${other} and ${label}`);
      seen.set(f, label);
    }
  }
  return { entries: [...seen].sort((a, b) => b[0].length - a[0].length || (a[0] < b[0] ? -1 : 1)) };
}

const SPACED_SCRIPT = /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Arabic}\p{Script=Greek}\p{N}]$/u;
const WORD_CHAR = /^[\p{L}\p{N}\p{M}]/u;
/** "or" in the 14 languages and the slash: a second choice after the first word. */
const ALTERNATIVE = /^(?:\/|\||or\b|o\b|ou\b|oder\b|или\b|أو|او|atau\b|หรือ|یا\b|hoặc\b|或|または|또는)/u;

/** The outcome of reading one value. */
export type ValueMatch<L extends string> =
  | {
      readonly kind: 'label';
      readonly label: L;
      readonly word: string;
      /** What follows the word, without the separator: a reason, or ''. */
      readonly rest: string;
      /** Whether the word ends the value or is followed by punctuation (not by more words). */
      readonly closed: boolean;
    }
  | { readonly kind: 'none' }
  | { readonly kind: 'ambiguous' };

/**
 * Reads a value against a table.
 * @example matchValue('Fail: condones violence', VERDICT_TABLE) // { kind: 'label', label: 'Fail', word: 'fail', rest: 'condones violence' }
 */
export function matchValue<L extends string>(value: string, table: LabelTable<L>): ValueMatch<L> {
  const original = trimValue(stripMarkup(value));
  const v = fold(original);
  if (v === '') return { kind: 'none' };
  for (const [word, label] of table.entries) {
    if (!v.startsWith(word)) continue;
    const after = v.slice(word.length);
    if (SPACED_SCRIPT.test(word) && WORD_CHAR.test(after)) continue;
    if (ALTERNATIVE.test(after.trim())) return { kind: 'ambiguous' };
    const rest = restOf(original, word).replace(/^[\s:：,，.。;；\-–—=)）(（]+/u, '').trim();
    const closed = after.trim() === '' || /^\s*[.。:：!！,，;；\-–—(（]/u.test(after);
    return { kind: 'label', label, word, rest: trimValue(rest), closed };
  }
  return { kind: 'none' };
}

/**
 * What follows `word` in the original (unfolded) value: the shortest prefix whose fold is the
 * word is cut off, so the reason keeps its case and script ("Fail: Excuses the act").
 */
function restOf(original: string, word: string): string {
  for (let k = 1; k <= original.length; k++) {
    if (fold(original.slice(0, k)) === word) return original.slice(k);
  }
  return '';
}

/** Whether the whole value is exactly one word of the table (a bare reply such as "Fail."). */
export function exactValue<L extends string>(value: string, table: LabelTable<L>): L | undefined {
  const v = fold(trimValue(stripMarkup(value)));
  return table.entries.find(([word]) => word === v)?.[1];
}
