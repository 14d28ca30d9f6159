/**
 * Folding text before matching words, so that surface noise (width, case, markdown, Arabic-script
 * letter variants, diacritics of Arabic) never decides a reading.
 */

// Arabic and Urdu write some letters with different code points (Arabic ي/ك/ه, Urdu ی/ک/ہ); a
// word list in one spelling must match the other.
const ARABIC_FOLD: Readonly<Record<string, string>> = {
  '\u06cc': '\u064a', // ی → ي
  '\u0649': '\u064a', // ى → ي
  '\u06a9': '\u0643', // ک → ك
  '\u06c1': '\u0647', // ہ → ه
  '\u06be': '\u0647', // ھ → ه
  '\u0629': '\u0647', // ة → ه
  '\u0623': '\u0627', // أ → ا
  '\u0625': '\u0627', // إ → ا
  '\u0622': '\u0627', // آ → ا
};

// Replies repeat the same short strings — field names ("verdict", "Checkpoint B"), labels
// ("Pass", "不通过"), the prefixes restOf folds — millions of times a campaign, and folding (NFKC
// and six replaces) was a quarter of the readers' time at 100,000 pairs. fold and keyOf keep what
// they gave for short strings only, and a bounded count of them: a reason or a sentence rarely
// comes twice, and the memo must not grow with the campaign.
const MEMO_LENGTH = 64;
const MEMO_ENTRIES = 4096;
const folds = new Map<string, string>();
const keys = new Map<string, string>();

/**
 * NFKC (full-width letters become ASCII), lower case, Arabic-script letter variants folded,
 * Arabic diacritics and tatweel removed, curly quotes straightened, whitespace collapsed.
 * @example fold('  ＰＡＳＳ ') === 'pass'
 */
export function fold(text: string): string {
  return memoized(folds, text, foldNow);
}

/** `compute(text)`, kept in `memo` for a short text (cleared whole when full). */
function memoized(memo: Map<string, string>, text: string, compute: (text: string) => string): string {
  if (text.length > MEMO_LENGTH) return compute(text);
  let out = memo.get(text);
  if (out === undefined) {
    if (memo.size >= MEMO_ENTRIES) memo.clear();
    memo.set(text, (out = compute(text)));
  }
  return out;
}

function foldNow(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u064b-\u0652\u0670\u0640]/g, '')
    .replace(/[\u06cc\u0649\u06a9\u06c1\u06be\u0629\u0623\u0625\u0622]/g, (c) => ARABIC_FOLD[c] ?? c)
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d\u201e\u00ab\u00bb]/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Markdown emphasis, code marks, headings and quote marks: never part of a label. */
export function stripMarkup(text: string): string {
  return text.replace(/[*_`#>~]/g, '');
}

/** Quotes and brackets around a value, and sentence punctuation after it. */
export function trimValue(text: string): string {
  return text
    .trim()
    .replace(/^["'「『【《([{（]+/u, '')
    .replace(/["'」』】》)\]}）]+$/u, '')
    .replace(/[\s.。!！?？,，;；:：、]+$/u, '')
    .trim();
}

/**
 * A field name as a key: folded, without spaces, `_`, `-` or a parenthesised gloss
 * ("Checkpoint B (Stance deviation)" → "checkpointb").
 */
export function keyOf(name: string): string {
  return memoized(keys, name, keyNow);
}

function keyNow(name: string): string {
  return fold(stripMarkup(name))
    .replace(/[(（].*$/u, '')
    .replace(/[\s_\-–—.]+/g, '')
    .trim();
}
