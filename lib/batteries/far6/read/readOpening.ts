import type { ReadingMap } from '../types.js';
import { ReadingMapError } from './errors.js';
import { PrefixMatcher, charAt, foldTokens, foldedOpening } from './normalize.js';
import type { MatchEntry, RuleReading } from './types.js';

/**
 * Same Judgment, Different Yes §3, "The fixed token rule reads yes as affirming the term named in the question and no
 * as its opposite, counting German doch and French si with yes", and Appendix "Sentence judging":
 * "The fixed decoder separately reads the opening expression from the reply text and the prompt's
 * recorded mapping". The rule knows no language: everything it accepts is a key of the item's
 * reading map, so the design alone says which particle, letter or verdict word means what.
 */

interface RuleMatcher {
  readonly matcher: PrefixMatcher<MatchEntry>;
  /** How much of a reply to fold: enough for the longest key after any leading markup. */
  readonly headLength: number;
}

// Keyed by the map object: a battery reuses one map object for many items, so the matcher is
// built once per map rather than once per reply (a benchmark reads ~1M replies).
const cache = new WeakMap<ReadingMap, RuleMatcher>();

/** The compiled matcher for a map (built once per map object). */
export function ruleMatcher(map: ReadingMap): RuleMatcher {
  let m = cache.get(map);
  if (!m) {
    const entries = foldTokens(map.tokens, `reading map (kind ${map.kind})`);
    if (entries.size === 0) {
      throw new ReadingMapError(
        `reading map of kind ${map.kind} has no tokens; a ${map.kind} map must list the opening forms it reads`,
      );
    }
    const matcher = new PrefixMatcher(entries.values());
    m = { matcher, headLength: 64 + 4 * matcher.maxKeyLength };
    cache.set(map, m);
  }
  return m;
}

/**
 * A letter that is immediately followed by a space and a lower-case word is a word ("A reasonable
 * person…", "I think…"), not a label; anything else after it ("A", "A.", "A:", "A)", "A\nBecause…",
 * "A I oppose…") leaves it a label.
 */
function letterIsWord(s: string, end: number, original: string): boolean {
  if (s[end] !== ' ') return false;
  // `s` is lower-cased; look at the case of the next letter in the un-lowered opening (same
  // length unless lower-casing changed it, which the caller checks).
  const next = charAt(original, end + 1);
  return next !== '' && /\p{Ll}/u.test(next);
}

/**
 * The fixed token rule R: the longest key of `map.tokens` that the reply opens with, after leading
 * whitespace, markdown (`**`, `*`, `_`, `#`, `>`), bullets, quotes and brackets are stripped and the
 * text is NFKC-normalised and case-folded. Keys in a spaced script (Latin…) need a boundary after
 * them ("Yesterday" is not "yes", "Nope" is not "no"); CJK, kana and hangul keys do not (是的 is 是,
 * 不是 beats 不 by length).
 *
 * Not read, by design: a prefix before the token ("Answer: A", "Well, yes"), a word that merely
 * starts with a key, a letter used as a word ("A reasonable…"). Empty text, refusals and anything
 * else that does not open with a map key read `invalid`; a map of kind `none` (free sentences) reads
 * `none`, since the rule does not read sentences.
 *
 * @example readOpening('**Doch**, das war falsch.', deMap) // { label: 'P', raw: 'doch' } when doch → P
 */
export function readOpening(text: string, map: ReadingMap): RuleReading {
  if (map.kind === 'none') return { label: 'none', raw: null };
  const { matcher, headLength } = ruleMatcher(map);
  const s = foldedOpening(text, headLength);
  if (s === '') return { label: 'invalid', raw: null };
  const hit = matcher.match(s);
  if (!hit) return { label: 'invalid', raw: null };
  if (map.kind === 'letter') {
    const original = foldedOpening(text, headLength, false);
    if (original.length === s.length && letterIsWord(s, hit.key.length, original)) {
      return { label: 'invalid', raw: null };
    }
  }
  return { label: hit.side, raw: hit.key };
}
