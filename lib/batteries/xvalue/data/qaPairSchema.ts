/**
 * The schema of one annotated QA pair (Towards Cross-lingual Values Judgment §5.2, Eq. 1), as a JSONL line holds it. CSV rows
 * are flat (README.md "Data format") and are lifted into this shape before validation, so both
 * formats are checked by the same rules and give the same messages. Every message says what was
 * expected and what was found (shortened: a message never echoes a whole answer).
 */
import { z } from 'zod';
import { kindOf, shortValue } from '../../../api/battery.js';
import { CATEGORIES, CATEGORY_NAMES, CHECKPOINTS, LANGUAGES, NATURES, QUESTION_LABELS, SCOPES, VERDICTS } from '../types.js';
import type { Category, HolisticAnnotation, Language, QuestionLabel, Verdict } from '../types.js';

/** A value as an issue message shows it: at most 60 characters of a string, a container by its kind. */
export const show: (value: unknown) => string = shortValue;

function oneOf(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}

/** A required, non-blank text field; `what` names it in messages. */
function requiredText(what: string) {
  return z
    .string({ error: (iss) => (iss.input === undefined || iss.input === null ? `missing ${what}` : `expected ${what} as text, got ${show(iss.input)}`) })
    .refine((s) => s.trim() !== '', { error: `${what} is empty; expected non-blank text` });
}

/** One of `values` whatever its case and surrounding blanks, in its canonical spelling; undefined when none. */
export function choiceValue<T extends string>(values: readonly T[], v: unknown): T | undefined {
  if (typeof v !== 'string') return undefined;
  // Most files spell the labels as they are: found without making a lower-case copy of each.
  if ((values as readonly string[]).includes(v)) return v as T;
  const folded = v.trim().toLowerCase();
  return values.find((x) => x.toLowerCase() === folded);
}

/** Case-insensitive choice among fixed labels, returned in their canonical spelling. */
function choice<T extends string>(what: string, values: readonly T[]) {
  return z.unknown().transform((v, ctx): T => {
    const hit = choiceValue(values, v);
    if (hit === undefined) {
      const message = v === undefined || v === null || v === '' ? `missing ${what}; expected one of ${oneOf(values)}` : `expected ${what} as one of ${oneOf(values)}, got ${show(v)}`;
      ctx.issues.push({ code: 'custom', message, input: v });
      return z.NEVER;
    }
    return hit;
  });
}

const CATEGORY_BY_NAME = new Map<string, Category>(
  CATEGORIES.flatMap((c) => [
    [c.toLowerCase(), c],
    [CATEGORY_NAMES[c].toLowerCase(), c],
  ]),
);

/** Table 1: the abbreviation (`P&G`) or the full name, in any case, as the abbreviation; undefined when neither. */
export function categoryValue(v: unknown): Category | undefined {
  return typeof v === 'string' ? CATEGORY_BY_NAME.get(v.trim().toLowerCase()) : undefined;
}

/** Table 1: the abbreviation (`P&G`) or the full name, in any case; stored as the abbreviation. */
const category = z.unknown().transform((v, ctx): Category => {
  const hit = categoryValue(v);
  if (hit === undefined) {
    const what = v === undefined || v === null || v === '' ? 'missing category' : `unknown category ${show(v)}`;
    ctx.issues.push({ code: 'custom', message: `${what}; expected one of ${oneOf(CATEGORIES)} (Towards Cross-lingual Values Judgment Table 1) or their full names`, input: v });
    return z.NEVER;
  }
  return hit;
});

/** A language code exactly as Table 9 writes it; undefined otherwise. */
export function languageValue(v: unknown): Language | undefined {
  return typeof v === 'string' ? LANGUAGES.find((l) => l === v) : undefined;
}

/**
 * One of the codes exactly as Table 9 and the campaign's `design.languages` write them: `EN` is
 * refused with the code meant, as `design.languages` refuses it, so that a pair's language is
 * spelled one way in every file of the study.
 */
const language = z.unknown().transform((v, ctx) => {
  const hit = languageValue(v);
  if (hit === undefined) {
    const meant = typeof v === 'string' ? LANGUAGES.find((l) => l === v.trim().toLowerCase()) : undefined;
    const what = v === undefined || v === null || v === '' ? 'missing language' : meant ? `language ${show(v)} is not written as a code is (did you mean "${meant}"?)` : `unknown language ${show(v)}`;
    ctx.issues.push({ code: 'custom', message: `${what}; expected one of the 14 codes of Towards Cross-lingual Values Judgment Table 9: ${LANGUAGES.join(', ')}`, input: v });
    return z.NEVER;
  }
  return hit;
});

/** A control character: an id holding one would break the result rows and CSV files it names the pair in. */
export const CONTROL_CHARACTER = /\p{Cc}/u;

/** An id names the pair in every result row and CSV file: one line of text, no control characters. */
const pairId = requiredText('id').refine((s) => !CONTROL_CHARACTER.test(s), {
  error: (iss) => `id ${show(iss.input)} holds a control character (a line break, a tab); expected an id on one line`,
});

const verdict = choice<Verdict>('a verdict', VERDICTS);

/** Checkpoint A (§5.2): Pass, Biased Prompting or Factual Error. */
const questionCheckpoint = choice<QuestionLabel>('checkpoint A', QUESTION_LABELS);

const FAIL_WITH_REASON = /^fail\b[\s:：\-–—,.;]*(.*)$/isu;

/** A holistic checkpoint's value (below), or undefined when it is none. */
export function holisticValue(v: unknown): HolisticAnnotation | undefined {
  if (typeof v === 'string') {
    const t = v.trim();
    if (/^pass$/i.test(t)) return { verdict: 'Pass', reason: null };
    const m = FAIL_WITH_REASON.exec(t);
    if (m) return { verdict: 'Fail', reason: (m[1] ?? '').trim() || null };
  } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const vd = typeof o['verdict'] === 'string' ? o['verdict'].trim().toLowerCase() : '';
    const reason = o['reason'];
    if ((vd === 'pass' || vd === 'fail') && (reason === undefined || reason === null || typeof reason === 'string')) {
      return { verdict: vd === 'pass' ? 'Pass' : 'Fail', reason: typeof reason === 'string' && reason.trim() ? reason.trim() : null };
    }
  }
  return undefined;
}

/**
 * B–D (§5.2): "either Pass or a string starting with Fail followed by a reason"; in JSONL also
 * `{ "verdict": "Fail", "reason": "…" }`.
 */
function holisticCheckpoint(letter: string) {
  return z.unknown().transform((v, ctx): HolisticAnnotation => {
    const hit = holisticValue(v);
    if (hit !== undefined) return hit;
    const message =
      v === undefined || v === null || v === ''
        ? `missing checkpoint ${letter}; expected "Pass" or "Fail: <reason>"`
        : `expected checkpoint ${letter} as "Pass" or "Fail: <reason>", got ${show(v)}`;
    ctx.issues.push({ code: 'custom', message, input: v });
    return z.NEVER;
  });
}

/** A fine-grained checkpoint's sentences (below), or undefined when its value is none. */
export function fineGrainedValue(v: unknown): string[] | undefined {
  let value = v;
  if (typeof value === 'string') {
    const t = value.trim();
    if (/^none$/i.test(t)) return [];
    if (!t.startsWith('[')) return undefined;
    try {
      value = JSON.parse(t) as unknown;
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string' && s.trim() !== '')) return undefined;
  return value.map((s) => (s as string).trim());
}

/**
 * E–H (§5.2): "the specific sentences extracted from a_i that trigger the k-th checkpoint
 * (otherwise None)": a list of sentences, `[]`, or the string "None". In CSV the list is a JSON
 * array in the cell.
 */
function fineGrainedCheckpoint(letter: string) {
  return z.unknown().transform((v, ctx): string[] => {
    const hit = fineGrainedValue(v);
    if (hit !== undefined) return hit;
    ctx.issues.push({ code: 'custom', message: fineGrainedProblem(letter, v), input: v });
    return z.NEVER;
  });
}

/** What is wrong with a value fineGrainedValue refused. */
function fineGrainedProblem(letter: string, v: unknown): string {
  let value = v;
  const t = typeof v === 'string' ? v.trim() : undefined;
  if (t?.startsWith('[')) {
    try {
      value = JSON.parse(t) as unknown;
    } catch {
      return `checkpoint ${letter} starts with "[" but is not a JSON array of sentences: ${show(t)}`;
    }
  }
  if (Array.isArray(value)) {
    const bad = value.findIndex((s) => typeof s !== 'string' || s.trim() === '');
    return `checkpoint ${letter}[${bad}]: expected an offending sentence (non-blank text), got ${show(value[bad])}`;
  }
  return v === undefined || v === null || v === ''
    ? `missing checkpoint ${letter}; expected "None" or a list of the offending sentences`
    : `expected checkpoint ${letter} as "None" or a list of the offending sentences, got ${show(v)}`;
}

const checkpoints = z
  .looseObject(
    {
      A: questionCheckpoint,
      B: holisticCheckpoint('B'),
      C: holisticCheckpoint('C'),
      D: holisticCheckpoint('D'),
      E: fineGrainedCheckpoint('E'),
      F: fineGrainedCheckpoint('F'),
      G: fineGrainedCheckpoint('G'),
      H: fineGrainedCheckpoint('H'),
    },
    { error: (iss) => (iss.input === undefined ? 'missing checkpoints; expected an object with the letters A–H' : `expected checkpoints as an object with the letters A–H, got ${show(iss.input)}`) },
  )
  .superRefine((o, ctx) => {
    for (const key of Object.keys(o)) {
      if ((CHECKPOINTS as readonly string[]).includes(key)) continue;
      const message = /^[A-Za-z]$/.test(key)
        ? `checkpoint letter "${key}" is outside A–H (Towards Cross-lingual Values Judgment §4.2 has A–D holistic and E–H fine-grained)`
        : `unknown field "${key}"; expected the checkpoint letters A–H`;
      ctx.addIssue({ code: 'custom', message, path: [key] });
    }
  })
  .transform(({ A, B, C, D, E, F, G, H }) => ({ A, B, C, D, E, F, G, H }));

const annotation = z.strictObject(
  {
    core_issue: requiredText('annotation.core_issue'),
    scope: choice('a scope', SCOPES),
    nature: choice('a nature', NATURES),
    checkpoints,
    overall: verdict,
  },
  {
    error: (iss) => {
      if (iss.code === 'unrecognized_keys') return `unknown field(s) ${iss.keys.join(', ')}; expected core_issue, scope, nature, checkpoints, overall`;
      return iss.input === undefined || iss.input === null
        ? 'missing annotation; expected core_issue, scope, nature, checkpoints A–H and overall (Towards Cross-lingual Values Judgment §5.2)'
        : `expected annotation as an object, got ${show(iss.input)}`;
    },
  },
);

/** One JSONL line of annotated pairs (README.md "Data format"). */
export const qaPairRecordSchema = z.strictObject(
  {
    id: pairId,
    language,
    category,
    question: requiredText('question'),
    answer: requiredText('answer'),
    annotation,
  },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown field(s) ${iss.keys.join(', ')}; expected id, language, category, question, answer, annotation`
        : `expected a JSON object for one QA pair, got ${kindOf(iss.input)}`,
  },
);

export type QaPairRecord = z.output<typeof qaPairRecordSchema>;

/** The flat columns of the CSV format, in the order a template writes them. */
export const CSV_COLUMNS = ['id', 'language', 'category', 'question', 'answer', 'core_issue', 'scope', 'nature', ...CHECKPOINTS, 'overall'] as const;
