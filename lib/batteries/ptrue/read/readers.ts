/**
 * The battery's readers: what each phase's reply yields as readings (README "Readings").
 *
 * | phase    | reader       | label                                   | value                 |
 * |----------|--------------|-----------------------------------------|-----------------------|
 * | generate | `option`     | correct · incorrect · unextractable     | 1 / 0 / 0             |
 * | generate | `language`   | the realised language, or `und`         | 1 when it is the requested one, else 0 |
 * | verify   | `ptrue`      | True · False · invalid                  | P(True), null when invalid |
 * | judge    | `judge:<id>` | correct · incorrect · malformed         | the 1–5 score, null when malformed |
 *
 * Correctness (§4): multiple choice by exact option match, short answers by the judge; an
 * unextractable option and a malformed judge output count as incorrect and keep their own label
 * (flagged). Correctness belongs to the generate reply, so every verifier copy shares it (§5).
 */
import { LANGUAGE_INFO, readFirstTokenProbability } from '../../../api/battery.js';
import type { ReadingDraft, ReplyView } from '../../../api/battery.js';
import type { PtrueItem } from '../types.js';
import { parseJudgeResult } from './judgeResult.js';
import type { IdentifyLanguage } from './languageId.js';
import { UNDETERMINED } from './languageId.js';
import { extractOption } from './options.js';

export const READERS = { option: 'option', language: 'language', ptrue: 'ptrue', judgePrefix: 'judge:' } as const;

/** The reader id of a judge model's readings. */
export const judgeReader = (judgeId: string): string => `${READERS.judgePrefix}${judgeId}`;

/** Labels per reader (Battery.vocabulary). */
export const PTRUE_VOCABULARY = {
  option: ['correct', 'incorrect', 'unextractable'],
  language: [...Object.keys(LANGUAGE_INFO), UNDETERMINED],
  ptrue: ['True', 'False', 'invalid'],
  'judge:*': ['correct', 'incorrect', 'malformed'],
} as const;

/** Exact option match of a multiple-choice generate reply (§4.1). */
export function readOption(item: PtrueItem, text: string | null): ReadingDraft {
  const gold = item.extras.gold_letter;
  const count = item.extras.option_count;
  if (gold === null || count === null) throw new RangeError(`readOption: item ${item.item_id} is not multiple choice`);
  const { letter, rule } = extractOption(text, count);
  const raw = JSON.stringify({ letter, rule, gold });
  if (letter === null) return { reader: READERS.option, label: 'unextractable', value: 0, raw };
  return { reader: READERS.option, label: letter === gold ? 'correct' : 'incorrect', value: letter === gold ? 1 : 0, raw };
}

/** The realised language of a generate reply, among the design's languages (§6.6, App. C). */
export function readLanguage(identify: IdentifyLanguage, item: PtrueItem, text: string | null): ReadingDraft {
  const guess = identify(text ?? '', item.extras.languages);
  return {
    reader: READERS.language,
    label: guess.language,
    value: guess.language === item.factors.response_language ? 1 : 0,
    raw: JSON.stringify({ by: guess.by, score: guess.score }),
  };
}

/** The readings of a generate reply: option match (multiple choice) and realised language. */
export function readGenerate(identify: IdentifyLanguage, item: PtrueItem, reply: ReplyView): ReadingDraft[] {
  const out: ReadingDraft[] = [];
  if (item.factors.kind === 'multiple_choice') out.push(readOption(item, reply.text));
  out.push(readLanguage(identify, item, reply.text));
  return out;
}

/** The P(True) reading of a verify reply (§3.5), over the item's label candidates. */
export function readVerify(item: PtrueItem, reply: ReplyView): ReadingDraft[] {
  const labels = item.extras.labels;
  if (!labels) throw new RangeError(`readVerify: item ${item.item_id} has no label candidates`);
  return [readFirstTokenProbability(reply, labels, { reader: READERS.ptrue, prefixOnly: labels.prefix })];
}

/** The judge's reading of one generate reply (§4.2): stored on the generate item. */
export function readJudge(judgeId: string, text: string | null): ReadingDraft {
  const v = parseJudgeResult(text);
  const reader = judgeReader(judgeId);
  if (!v.ok) return { reader, label: 'malformed', value: null, raw: text };
  return { reader, label: v.correct ? 'correct' : 'incorrect', value: v.score, raw: text };
}
