/**
 * The quick check of a valid QA pair, written by hand: zod's `safeParse` made most of the garbage of
 * loading a design (100,000 pairs: 780 of the 1,068 MB allocated, against 486 MB in all with this
 * check, and 1.7 s instead of 2.1–3.4 s), and the run loads the design in its main thread and again
 * in each partition thread. That garbage was most of what their heaps held when the run weighed how
 * many threads it could afford (partitionThreads.ts, threadsForWave). This checks the rules of
 * `qaPairRecordSchema` directly on the record, with the schema's own value functions
 * (qaPairSchema.ts), and gives what `qaPairRecordSchema.parse` would — or declines, and then the
 * schema runs as before. It only ever accepts what the schema accepts, with the same values
 * (test/batteries/xvalue/quickQaPair.test.ts holds it to that), and never makes a message: every
 * issue about a pair still comes from the schema.
 */
import { hasOnlyKeys, isPlainObject } from '../../../api/battery.js';
import { CHECKPOINTS, NATURES, QUESTION_LABELS, SCOPES, VERDICTS } from '../types.js';
import { categoryValue, choiceValue, CONTROL_CHARACTER, fineGrainedValue, holisticValue, languageValue } from './qaPairSchema.js';
import type { QaPairRecord } from './qaPairSchema.js';

type RecordAnnotation = QaPairRecord['annotation'];

const PAIR_KEYS: ReadonlySet<string> = new Set(['id', 'language', 'category', 'question', 'answer', 'annotation']);
const ANNOTATION_KEYS: ReadonlySet<string> = new Set(['core_issue', 'scope', 'nature', 'checkpoints', 'overall']);
const CHECKPOINT_KEYS: ReadonlySet<string> = new Set(CHECKPOINTS);

/** The schema's requiredText: a string that is not blank, as it is. */
function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

function checkpoints(v: unknown): RecordAnnotation['checkpoints'] | undefined {
  if (!isPlainObject(v) || !hasOnlyKeys(v, CHECKPOINT_KEYS)) return undefined;
  const A = choiceValue(QUESTION_LABELS, v['A']);
  const B = holisticValue(v['B']);
  const C = holisticValue(v['C']);
  const D = holisticValue(v['D']);
  const E = fineGrainedValue(v['E']);
  const F = fineGrainedValue(v['F']);
  const G = fineGrainedValue(v['G']);
  const H = fineGrainedValue(v['H']);
  if (!A || !B || !C || !D || !E || !F || !G || !H) return undefined;
  return { A, B, C, D, E, F, G, H };
}

function annotation(v: unknown): RecordAnnotation | undefined {
  if (!isPlainObject(v) || !hasOnlyKeys(v, ANNOTATION_KEYS)) return undefined;
  const core_issue = text(v['core_issue']);
  const scope = choiceValue(SCOPES, v['scope']);
  const nature = choiceValue(NATURES, v['nature']);
  const marks = checkpoints(v['checkpoints']);
  const overall = choiceValue(VERDICTS, v['overall']);
  if (core_issue === undefined || !scope || !nature || !marks || !overall) return undefined;
  return { core_issue, scope, nature, checkpoints: marks, overall };
}

/** The pair as the schema parses it when it is certainly valid; undefined: the schema decides, and names what is wrong. */
export function quickQaPair(raw: unknown): QaPairRecord | undefined {
  if (!isPlainObject(raw) || !hasOnlyKeys(raw, PAIR_KEYS)) return undefined;
  const id = text(raw['id']);
  const language = languageValue(raw['language']);
  const category = categoryValue(raw['category']);
  const question = text(raw['question']);
  const answer = text(raw['answer']);
  const marks = annotation(raw['annotation']);
  if (id === undefined || CONTROL_CHARACTER.test(id) || !language || !category || question === undefined || answer === undefined || !marks) return undefined;
  return { id, language, category, question, answer, annotation: marks };
}
