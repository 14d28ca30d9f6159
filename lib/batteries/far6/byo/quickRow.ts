/**
 * The quick check of a valid row, written by hand: zod's `safeParse` of every row (with the loop
 * that prepares its input) was the largest single cost of importing a million rows (~10 µs a row
 * of ~50). This checks the rules of `byoRowSchema` directly on the record and gives the row with
 * its defaults, as `withDefaults(byoRowSchema.parse(…))` would — or declines, and then validate.ts
 * runs the schema exactly as before. It only ever accepts what zod accepts, with the same values
 * (test/batteries/far6/analysis/byoQuickRow.test.ts holds it to that), and it never produces a
 * message: every issue about a bad row still comes from zod. Anything out of the ordinary (a field
 * whose JSON text must be parsed and fails, a nested key the schema would strip, a date, an object
 * that is not plain) is declined rather than handled here.
 */
import { hasOnlyKeys, isPlainObject, looksLikeSecret } from '../../../api/battery.js';
import { isJsonError, normalize } from './fieldValues.js';
import { JSON_FIELDS, MAX_MODEL_CHARS, UNGROUPED_STORIES } from './schema.js';
import type { ByoRow } from './schema.js';
import { ANSWER_CONSTRAINTS, LANGUAGES, QUESTION_FORMS, READING_LABELS, STORY_GROUPS } from '../types.js';

const LANGUAGE_SET: ReadonlySet<unknown> = new Set(LANGUAGES);
const FORM_SET: ReadonlySet<unknown> = new Set(QUESTION_FORMS);
const CONSTRAINT_SET: ReadonlySet<unknown> = new Set(ANSWER_CONSTRAINTS);
const LABEL_SET: ReadonlySet<unknown> = new Set(READING_LABELS);
const GROUP_SET: ReadonlySet<unknown> = new Set(STORY_GROUPS);
const MAP_KINDS: ReadonlySet<unknown> = new Set(['particle', 'verdict', 'letter', 'none']);
const PROPOSITION_SET: ReadonlySet<unknown> = new Set(['P', 'notP']);
const STATUS_SET: ReadonlySet<unknown> = new Set(['ok', 'error']);
/** The model names a folder: the schema's safeSegment. */
const SAFE_SEGMENT = /^[A-Za-z0-9._-]+$/;

// Set by any check that fails; the row is then left to zod. One import reads rows one at a time.
let declined = false;

function decline(): undefined {
  declined = true;
  return undefined;
}

/**
 * A field as validate.ts gives it to zod (`normalize`), or undefined when absent or null. JSON and
 * Parquet values are mostly of their type already: only text in CSV, text in a JSON field, dates
 * and big integers go through `normalize`.
 */
function raw(record: Record<string, unknown>, field: string, fromCsv: boolean): unknown {
  const v = record[field];
  if (v === undefined || v === null) return undefined;
  if (!fromCsv && (typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && !JSON_FIELDS.has(field)) || (typeof v === 'object' && !(v instanceof Date)))) {
    return v;
  }
  const n = normalize(field, v, fromCsv);
  if (n === null) return undefined;
  return isJsonError(n) ? decline() : n;
}

function str(record: Record<string, unknown>, field: string, fromCsv: boolean): string | undefined {
  const v = raw(record, field, fromCsv);
  return v === undefined || typeof v === 'string' ? v : decline();
}

function nonEmpty(record: Record<string, unknown>, field: string, fromCsv: boolean): string | undefined {
  const v = str(record, field, fromCsv);
  return v === '' ? decline() : v;
}

function required<T>(v: T | undefined): T {
  if (v === undefined) decline();
  return v as T;
}

function oneOf<T>(set: ReadonlySet<unknown>, record: Record<string, unknown>, field: string, fromCsv: boolean): T | undefined {
  const v = raw(record, field, fromCsv);
  return v === undefined || set.has(v) ? (v as T | undefined) : decline();
}

/** A safe integer of at least `min` (zod's z.int()). */
function int(record: Record<string, unknown>, field: string, fromCsv: boolean, min: number): number | undefined {
  const v = raw(record, field, fromCsv);
  return v === undefined || (Number.isSafeInteger(v) && (v as number) >= min) ? (v as number | undefined) : decline();
}

function proposition(v: unknown): boolean {
  return v === 'P' || v === 'notP';
}

/** `readings`: reader, label and raw only (zod would strip any other key: declined). */
function readings(v: unknown): ByoRow['readings'] {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) return decline();
  for (const r of v as unknown[]) {
    if (!isPlainObject(r)) return decline();
    for (const k in r) if (k !== 'reader' && k !== 'label' && k !== 'raw') return decline();
    const { reader, label, raw: said } = r;
    if (typeof reader !== 'string' || reader === '' || !LABEL_SET.has(label)) return decline();
    if (said !== undefined && said !== null && typeof said !== 'string') return decline();
  }
  return v as ByoRow['readings'];
}

const MAP_KEYS: ReadonlySet<string> = new Set(['kind', 'tokens', 'particles', 'letters', 'verdicts']);
const PARTICLE_KEYS: ReadonlySet<string> = new Set(['yes', 'no', 'reverse', 'order']);
const LETTER_KEYS: ReadonlySet<string> = new Set(['letter', 'proposition']);
const VERDICT_KEYS: ReadonlySet<string> = new Set(['P', 'notP']);

/** `reading_map`, every nested object with the schema's keys only. */
function readingMap(v: unknown): ByoRow['reading_map'] {
  if (v === undefined) return undefined;
  if (!isPlainObject(v) || !hasOnlyKeys(v, MAP_KEYS) || !MAP_KINDS.has(v['kind'])) return decline();
  const tokens = v['tokens'];
  if (!isPlainObject(tokens)) return decline();
  // zod's record skips a "__proto__" key (it cannot be assigned as a plain property).
  for (const k in tokens) if (k === '__proto__' || !proposition(tokens[k])) return decline();
  const particles = v['particles'];
  if (particles !== undefined) {
    if (!isPlainObject(particles) || !hasOnlyKeys(particles, PARTICLE_KEYS)) return decline();
    const { yes, no, reverse, order } = particles;
    if (typeof yes !== 'string' || typeof no !== 'string' || (reverse !== undefined && typeof reverse !== 'string')) return decline();
    if (!Array.isArray(order) || !order.every((o) => typeof o === 'string')) return decline();
  }
  const letters = v['letters'];
  if (letters !== undefined) {
    if (!Array.isArray(letters)) return decline();
    for (const l of letters as unknown[]) {
      if (!isPlainObject(l) || !hasOnlyKeys(l, LETTER_KEYS)) return decline();
      if (typeof l['letter'] !== 'string' || l['letter'] === '' || !proposition(l['proposition'])) return decline();
    }
  }
  const verdicts = v['verdicts'];
  if (verdicts !== undefined) {
    if (!isPlainObject(verdicts) || !hasOnlyKeys(verdicts, VERDICT_KEYS)) return decline();
    if (typeof verdicts['P'] !== 'string' || typeof verdicts['notP'] !== 'string') return decline();
  }
  return v as ByoRow['reading_map'];
}

/**
 * The row with its defaults when it is certainly valid, or undefined: then the schema decides (and
 * names what is wrong). `fromCsv`: values are text, converted per field as validate.ts does.
 */
export function quickRow(record: Record<string, unknown>, fromCsv: boolean): ByoRow | undefined {
  if (!isPlainObject(record)) return undefined;
  declined = false;
  const model = required(str(record, 'model', fromCsv));
  if (model !== undefined && (!SAFE_SEGMENT.test(model) || model === '.' || model === '..' || model.length > MAX_MODEL_CHARS || looksLikeSecret(model))) decline();
  // text must be there; null says there is none (kept as null, not dropped as for other fields).
  const text = record['text'] === null ? null : required(str(record, 'text', fromCsv));
  const form = required(oneOf<ByoRow['form']>(FORM_SET, record, 'form', fromCsv));
  const cost = raw(record, 'cost_usd', fromCsv);
  if (cost !== undefined && !(typeof cost === 'number' && Number.isFinite(cost) && cost >= 0)) decline();
  const simulated = raw(record, 'simulated', fromCsv);
  if (simulated !== undefined && typeof simulated !== 'boolean') decline();
  const row: ByoRow = {
    model,
    language: required(oneOf<ByoRow['language']>(LANGUAGE_SET, record, 'language', fromCsv)),
    story: required(nonEmpty(record, 'story', fromCsv)),
    story_group: oneOf<string>(GROUP_SET, record, 'story_group', fromCsv) ?? UNGROUPED_STORIES,
    concept_pair: required(nonEmpty(record, 'concept_pair', fromCsv)),
    form,
    constraint: required(oneOf<ByoRow['constraint']>(CONSTRAINT_SET, record, 'constraint', fromCsv)),
    named: required(oneOf<ByoRow['named']>(PROPOSITION_SET, record, 'named', fromCsv)),
    option_order: required(int(record, 'option_order', fromCsv, 0)),
    repeat: required(int(record, 'repeat', fromCsv, 0)),
    construction: nonEmpty(record, 'construction', fromCsv) ?? form,
    text,
    item_id: nonEmpty(record, 'item_id', fromCsv),
    prompt_key: nonEmpty(record, 'prompt_key', fromCsv),
    attempt: int(record, 'attempt', fromCsv, 1),
    status: oneOf<ByoRow['status']>(STATUS_SET, record, 'status', fromCsv),
    readings: readings(raw(record, 'readings', fromCsv)),
    reading_map: readingMap(raw(record, 'reading_map', fromCsv)),
    prop_p: str(record, 'prop_p', fromCsv),
    prop_notp: str(record, 'prop_notp', fromCsv),
    prompt: str(record, 'prompt', fromCsv),
    cost_usd: cost as number | undefined,
    input_tokens: int(record, 'input_tokens', fromCsv, 0),
    output_tokens: int(record, 'output_tokens', fromCsv, 0),
    provider: str(record, 'provider', fromCsv),
    simulated: simulated as boolean | undefined,
    created_at: str(record, 'created_at', fromCsv),
    error_message: str(record, 'error_message', fromCsv),
  };
  if (row.option_order > 1) decline();
  return declined ? undefined : row;
}
