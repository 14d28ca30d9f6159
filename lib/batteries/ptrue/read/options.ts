/**
 * The option a multiple-choice reply chooses (Disentangling Question, Response, and Verifier Languages §4.1: "exact matching between the extracted
 * option and the gold option … Responses without an extractable final option are scored incorrect").
 *
 * Rules, in order (the paper does not give its extractor; this one is written for the battery's
 * prompt, which asks for the letter first and then an explanation, in any of six languages):
 * 1. An answer statement, the last one in the reply (the *final* option): "the answer is B",
 *    "Answer: B", "correct option: C", and the same in the other five languages ("答案是B",
 *    "La réponse est B", "答えはB", "정답은 B", "उत्तर: B", …). The letter may stand in
 *    parentheses or bold.
 * 2. Otherwise a letter opening the reply, set off as a label: "B.", "B)", "(B)", "B:", "B,",
 *    "B、", or "B" alone on its line — not the English article in "A tree is …".
 * 3. Otherwise nothing: unextractable.
 * Text is NFKC-normalised first, so full-width letters (Ｂ) count, and Markdown emphasis is dropped.
 * A letter beyond the item's options is not an option: `out-of-range`, unextractable too.
 */
import { OPTION_LETTERS } from '../types.js';

export type OptionRule = 'answer-statement' | 'leading-letter' | 'none' | 'out-of-range';

export interface ExtractedOption {
  /** The chosen letter, or null when none can be extracted. */
  readonly letter: string | null;
  readonly rule: OptionRule;
}

// A letter standing alone: in brackets or not, and not the start of a Latin word.
const LETTER = String.raw`[(\[]?([A-J])[)\]]?(?![A-Za-z])`;
const STATEMENTS = [
  // English: the answer is B / answer: B / correct option (is) C / the correct choice is (D)
  String.raw`(?:[Aa]nswer|ANSWER|[Cc]orrect\s+(?:option|choice|letter))(?:\s+is)?\s*[:：]?\s*(?:option\s+|choice\s+)?`,
  // French: la réponse est B / réponse : B / la bonne option est C / la bonne réponse : D
  String.raw`(?:[Rr][ée]ponse|[Bb]onne\s+option)(?:\s+(?:correcte\s+)?est)?\s*[:：]?\s*(?:l['’]option\s+|option\s+)?`,
  // Chinese: 答案是B / 答案：B / 正确选项是C / 正确答案为D
  String.raw`(?:答案|正确选项|正確選項|正确答案)\s*(?:是|为|為|[:：])?\s*(?:选项)?\s*`,
  // Japanese: 答えはB / 答え：B / 正解はC / 正しい選択肢はD
  String.raw`(?:答え|正解|正しい選択肢)\s*(?:は|[:：])?\s*`,
  // Korean: 정답은 B / 답: B / 정답 선택지는 C
  String.raw`(?:정답(?:\s*선택지)?|답)\s*(?:은|는|[:：])?\s*`,
  // Hindi: उत्तर: B / उत्तर B है / सही विकल्प C है
  String.raw`(?:उत्तर|सही\s+विकल्प)\s*(?:है\s*)?[:：]?\s*(?:विकल्प\s*)?`,
];
const STATEMENT = new RegExp(`(?:${STATEMENTS.join('|')})${LETTER}`, 'gu');
// Keywords are matched by explicit case classes, not the i flag, which would let "the answer is a
// mammal" choose option A.
const LEADING = /^\s*(?:[([]([A-J])[)\]]|([A-J])(?:[.):：,、]|\s*$|\s*\n))/u;

/**
 * The option letter a reply chooses among `optionCount` options.
 * @example extractOption('B. 太平洋が最大です。', 4) // { letter: 'B', rule: 'leading-letter' }
 * @example extractOption('A tree falls.', 4) // { letter: null, rule: 'none' }
 */
export function extractOption(text: string | null, optionCount: number): ExtractedOption {
  if (text === null) return { letter: null, rule: 'none' };
  const clean = text.normalize('NFKC').replace(/\*\*|__/g, '');
  let letter: string | null = null;
  let rule: OptionRule = 'none';
  let last: RegExpExecArray | null = null;
  for (const m of clean.matchAll(STATEMENT)) last = m;
  if (last) {
    letter = last[1]!.toUpperCase();
    rule = 'answer-statement';
  } else {
    const m = LEADING.exec(clean);
    if (m) {
      letter = (m[1] ?? m[2])!.toUpperCase();
      rule = 'leading-letter';
    }
  }
  if (letter === null) return { letter: null, rule: 'none' };
  if (OPTION_LETTERS.indexOf(letter as (typeof OPTION_LETTERS)[number]) >= optionCount) return { letter: null, rule: 'out-of-range' };
  return { letter, rule };
}
