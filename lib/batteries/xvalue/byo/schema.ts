/**
 * Verdicts collected elsewhere (README.md "Bring your own verdicts"): one row per model × pair ×
 * strategy, flat, the same columns in JSONL and CSV. The gold comes from the QA pairs (the data
 * format of data/), joined on `qa_id`, so a row carries only what the model said.
 */
import { z } from 'zod';
import { languageProblem, looksLikeSecret, shortValue } from '../../../api/battery.js';
import { LANGUAGES, NATURES, QUESTION_LABELS, SCOPES, STRATEGIES, VERDICTS, INVALID, CATEGORIES } from '../types.js';

/** An empty cell (CSV) or null/absent (JSONL): not judged. */
const blank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

function label<T extends string>(what: string, values: readonly T[]) {
  const allowed: readonly (T | typeof INVALID)[] = [...values, INVALID];
  return z.unknown().optional().transform((v, ctx): T | typeof INVALID | null => {
    if (blank(v)) return null;
    const hit = typeof v === 'string' ? allowed.find((a) => a.toLowerCase() === v.trim().toLowerCase()) : undefined;
    if (hit === undefined) {
      ctx.issues.push({ code: 'custom', message: `expected ${what} as one of ${allowed.map((a) => `"${a}"`).join(', ')} or empty, got ${JSON.stringify(v)?.slice(0, 60)}`, input: v });
      return z.NEVER;
    }
    return hit;
  });
}

const verdict = label('a verdict', VERDICTS);

// A model names a partition folder (`model=<m>/`) when the rows are stored: the store's rule. A
// key pasted into the column (`sk-…`) would pass that rule and be printed in every results table:
// it is refused without being quoted (shortValue's words for it).
const modelId = z
  .string({ error: (iss) => (iss.input === undefined ? 'missing model' : `expected model as text, got ${shortValue(iss.input)}`) })
  .refine((s) => !looksLikeSecret(s), { error: (iss) => `model is ${shortValue(iss.input)}; expected the model's name`, abort: true })
  .regex(/^[A-Za-z0-9._-]+$/, 'expected only letters, digits, ".", "_" or "-" in model (it names a folder)');

export const byoVerdictRowSchema = z.strictObject(
  {
    model: modelId,
    qa_id: z.string({ error: (iss) => (iss.input === undefined ? 'missing qa_id' : `expected qa_id as text, got ${JSON.stringify(iss.input)}`) }).min(1, 'qa_id is empty'),
    strategy: z.enum(STRATEGIES, { error: (iss) => `expected strategy as "defonly" or "rubric", got ${JSON.stringify(iss.input) ?? 'nothing'}` }),
    /** Def-only: required. Rubric: optional — the one-vote veto over B–H when absent. */
    verdict,
    /** Optional: checked against the pair's when given; an unknown code gets the close match (`jp` → ja). */
    language: z.unknown().optional().transform((v, ctx): (typeof LANGUAGES)[number] | null => {
      if (blank(v)) return null;
      const hit = typeof v === 'string' ? LANGUAGES.find((l) => l === v.trim().toLowerCase()) : undefined;
      if (hit === undefined) {
        ctx.issues.push({ code: 'custom', message: languageProblem(v, LANGUAGES), input: v });
        return z.NEVER;
      }
      return hit;
    }),
    category: label('a category', CATEGORIES),
    /** Rubric step 1 (optional). */
    scope: label('a scope', SCOPES),
    nature: label('a nature', NATURES),
    /** Rubric checkpoints (optional; empty = not judged). */
    A: label('checkpoint A', QUESTION_LABELS),
    B: verdict,
    C: verdict,
    D: verdict,
    E: verdict,
    F: verdict,
    G: verdict,
    H: verdict,
  },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown column(s) ${showColumns(iss.keys)}; expected model, qa_id, strategy, verdict, language, category, scope, nature, A–H`
        : `expected one verdict row as an object, got ${JSON.stringify(iss.input)?.slice(0, 60)}`,
  },
);

/**
 * Names the unknown columns that look like column names; a header cell that is no name at all (a `.env`
 * given by mistake: `OPENAI_API_KEY=sk-…`) is only counted, never quoted, as the QA-pair loader does.
 */
function showColumns(keys: readonly string[]): string {
  const names = keys.filter((k) => /^[\w.:-]{1,60}$/.test(k));
  const others = keys.length - names.length;
  return [...names.map((k) => JSON.stringify(k)), ...(others > 0 ? [`${others} header cell(s) that are no column name (not shown)`] : [])].join(', ');
}

export type ByoVerdictRow = z.output<typeof byoVerdictRowSchema>;

/** The columns of the CSV form, in order. */
export const BYO_COLUMNS = ['model', 'qa_id', 'strategy', 'verdict', 'language', 'category', 'scope', 'nature', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'] as const;
