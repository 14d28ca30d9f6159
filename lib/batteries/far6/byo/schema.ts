/**
 * The schema of replies collected outside sondage ("Bring your own replies"):
 * one row per reply attempt, carrying the FAR-6 design factors of Same Judgment, Different Yes §3 (the columns of the
 * prompts table), the reply text and, optionally, its readings and the item's reading map. The
 * committed schema/replies.schema.json is generated from `byoRowSchema`.
 */
import { z } from 'zod';
import { looksLikeSecret, shortValue } from '../../../api/battery.js';
import { ANSWER_CONSTRAINTS, LANGUAGES, QUESTION_FORMS, READING_LABELS, STORY_GROUPS } from '../types.js';

/** The group of a story whose rows give none. */
export const UNGROUPED_STORIES = 'ungrouped';

const proposition = z.enum(['P', 'notP']);
const nonEmpty = z.string().min(1);
/**
 * The longest model name a row may give: it names a folder (`model=<m>/`), and file systems
 * refuse a name over 255 bytes (ENAMETOOLONG, which the embedded database reports as an I/O error).
 */
export const MAX_MODEL_CHARS = 200;

// A model names a partition folder (`model=<m>/`): the same rule as lib/store/layout.ts.
const safeSegment = z
  .string()
  .max(MAX_MODEL_CHARS, `expected a name of at most ${MAX_MODEL_CHARS} characters (it names a folder)`)
  // A key pasted into the column (`sk-…`) passes the folder rule and would be printed in every result table.
  .refine((v) => !looksLikeSecret(v), { error: (iss) => `is ${shortValue(iss.input)}; expected the model's name`, abort: true })
  .regex(/^[A-Za-z0-9._-]+$/, 'expected only letters, digits, ".", "_" or "-" (it names a folder)')
  .refine((v) => v !== '.' && v !== '..', 'expected a folder name, not "." or ".."');

/** Same Judgment, Different Yes §3: how the fixed token rule reads an opening (lib/design/types.ts ReadingMap). */
export const byoReadingMapSchema = z
  .object({
    kind: z.enum(['particle', 'verdict', 'letter', 'none']),
    tokens: z.record(z.string(), proposition).describe('every accepted opening form (case-folded) → the proposition it stands for'),
    particles: z
      .object({ yes: z.string(), no: z.string(), reverse: z.string().optional(), order: z.array(z.string()) })
      .optional(),
    letters: z
      .array(z.object({ letter: z.string().min(1), proposition }))
      .optional()
      .describe('label items: letter → proposition, in the order the prompt lists them'),
    verdicts: z.object({ P: z.string(), notP: z.string() }).optional(),
  })
  .describe('the item\'s reading map, as a run stores it in prompts.reading_map_json; a JSON string in CSV');

/** One reading of the reply: who read it and the label (the seed's codebook plus invalid). */
export const byoReadingSchema = z.object({
  reader: nonEmpty.describe('"rule", "rule+" or "judge:<judge model>"; any name is kept as its own readout'),
  label: z.enum(READING_LABELS),
  raw: z.string().nullish().describe('what the reader matched or said'),
});

/** One row: one reply attempt to one FAR-6 prompt item. Optional fields may be null or absent. */
export const byoRowSchema = z
  .object({
    model: safeSegment.describe('the respondent model (a cell is model × language)'),
    language: z.enum(LANGUAGES),
    story: nonEmpty,
    story_group: z.enum(STORY_GROUPS).nullish().describe(`default "${UNGROUPED_STORIES}": the per-group tables (Same Judgment, Different Yes §5) then hold those stories apart`),
    concept_pair: nonEmpty,
    form: z.enum(QUESTION_FORMS),
    constraint: z.enum(ANSWER_CONSTRAINTS),
    named: proposition.describe('keying: the proposition whose term the question names'),
    option_order: z.int().min(0).max(1).describe('which order of the options was shown'),
    repeat: z.int().min(0).describe('0-based repeat index of the same prompt'),
    construction: nonEmpty.nullish().describe('wording family of the question; default: the question form (one family per form)'),
    text: z.string().nullable().describe('the reply; null for an attempt that produced no text, or where only its readings are given'),
    item_id: nonEmpty.nullish().describe('default: derived from model, language, the factors and repeat'),
    prompt_key: nonEmpty.nullish().describe('default: derived from model, language and the factors (repeats share it)'),
    attempt: z.int().min(1).nullish().describe('1-based; default 1. The analysis takes the lowest ok attempt of an item'),
    status: z.enum(['ok', 'error']).nullish().describe('default: ok when text is a string or readings are given, error otherwise'),
    readings: z.array(byoReadingSchema).nullish().describe('precomputed readings of this reply; a JSON string in CSV'),
    reading_map: byoReadingMapSchema.nullish(),
    prop_p: z.string().nullish().describe('the reference proposition P as a sentence'),
    prop_notp: z.string().nullish(),
    prompt: z.string().nullish().describe('the prompt as sent (stored as one user message)'),
    cost_usd: z.number().min(0).nullish(),
    input_tokens: z.int().min(0).nullish(),
    output_tokens: z.int().min(0).nullish(),
    provider: z.string().nullish(),
    simulated: z.boolean().nullish().describe('true for replies of a simulated respondent (the report says so)'),
    created_at: z.string().nullish().describe('ISO time; breaks ties between equal attempts'),
    error_message: z.string().nullish(),
  })
  .describe('One reply attempt to one FAR-6 prompt item (Same Judgment, Different Yes §3), for `sondage analyze --replies`.');

/** A row as the schema parses it (optional fields may be null). */
export type ByoRowParsed = z.output<typeof byoRowSchema>;

/** A valid row with the documented defaults applied: what the import works with. */
export type ByoRow = Omit<ByoRowParsed, 'story_group' | 'construction'> & { readonly story_group: string; readonly construction: string };

/** The defaults of README "Bring your own replies": the story group, the construction family. */
export function withDefaults(r: ByoRowParsed): ByoRow {
  return { ...r, story_group: r.story_group ?? UNGROUPED_STORIES, construction: r.construction ?? r.form };
}

/** Columns of a row, in schema order. */
export const BYO_COLUMNS: readonly string[] = Object.keys(byoRowSchema.shape);

/** Fields that hold an integer (CSV gives them as text). */
export const INTEGER_FIELDS: ReadonlySet<string> = new Set(['option_order', 'repeat', 'attempt', 'input_tokens', 'output_tokens']);
/** Fields that hold a number. */
export const NUMBER_FIELDS: ReadonlySet<string> = new Set(['cost_usd']);
export const BOOLEAN_FIELDS: ReadonlySet<string> = new Set(['simulated']);
/** Fields that hold JSON structures (a JSON string in CSV, and allowed as one in JSONL and Parquet). */
export const JSON_FIELDS: ReadonlySet<string> = new Set(['readings', 'reading_map']);

/** The JSON Schema of one row (draft 2020-12), as schema/replies.schema.json holds it. */
export function repliesJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(byoRowSchema, { io: 'input', target: 'draft-2020-12' }),
    title: 'sondage replies row',
  };
}

/** `repliesJsonSchema()` as text, with a final newline. */
export function repliesJsonSchemaText(): string {
  return `${JSON.stringify(repliesJsonSchema(), null, 2)}\n`;
}
