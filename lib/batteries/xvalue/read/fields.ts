/**
 * Reading one field of a reply — a JSON member, else labelled lines, else (for a verdict) a bare
 * reply — without guessing: a field given twice with different labels, or a value that names two
 * labels, reads `invalid`.
 */
import { INVALID } from '../types.js';
import { FIELD_KEYS, NONE_WORDS } from './lexicon.js';
import { labelledLines } from './labelledLines.js';
import { matchValue } from './matchValue.js';
import type { LabelTable } from './matchValue.js';
import { fold, keyOf, stripMarkup, trimValue } from './normalize.js';

/** A label read off a reply, with what the reader matched or the reason that came with it. */
export interface FieldReading<L extends string> {
  readonly label: L | typeof INVALID;
  readonly raw: string | null;
}

/** The most characters of a reply kept in `raw` of an invalid reading (enough to see why). */
export const RAW_EXCERPT = 200;

export function excerpt(text: string): string {
  const t = text.trim();
  return t.length > RAW_EXCERPT ? `${t.slice(0, RAW_EXCERPT - 1)}…` : t;
}

/**
 * The members of a JSON object whose key is one of `keys`, at the top level or one level down
 * (`{"checkpoints": {"B": …}}`).
 */
export function jsonMembers(obj: Readonly<Record<string, unknown>> | undefined, keys: ReadonlySet<string>): unknown[] {
  if (!obj) return [];
  const top = Object.entries(obj).filter(([k]) => keys.has(keyOf(k)));
  if (top.length > 0) return top.map(([, v]) => v);
  const nested: unknown[] = [];
  for (const v of Object.values(obj)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, inner] of Object.entries(v as Record<string, unknown>)) if (keys.has(keyOf(k))) nested.push(inner);
    }
  }
  return nested;
}

/** A JSON value as a labelled string: a string, or an object's verdict and reason (`{"verdict": "Fail", "reason": "…"}`). */
function jsonText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const verdict = jsonMembers(v as Record<string, unknown>, FIELD_KEYS.verdict)[0];
    if (typeof verdict !== 'string') return undefined;
    const reason = Object.entries(v as Record<string, unknown>).find(([k]) => ['reason', 'explanation', 'rationale'].includes(keyOf(k)))?.[1];
    return typeof reason === 'string' && reason.trim() !== '' ? `${verdict}: ${reason}` : verdict;
  }
  return undefined;
}

/** Several readings of one field agree on one label, or the field reads invalid. */
function agree<L extends string>(readings: readonly FieldReading<L>[], text: string): FieldReading<L> {
  const labels = new Set(readings.map((r) => r.label));
  if (labels.size === 1 && !labels.has(INVALID)) return readings[0] as FieldReading<L>;
  return { label: INVALID, raw: excerpt(text) };
}

function readOne<L extends string>(value: string, table: LabelTable<L>): FieldReading<L> {
  const m = matchValue(value, table);
  if (m.kind !== 'label') return { label: INVALID, raw: excerpt(value) };
  return { label: m.label, raw: m.closed && m.rest !== '' ? m.rest : trimValue(stripMarkup(value)) };
}

export interface FieldOptions {
  /** Accept a reply that is only the value ("Fail.", "不通过", "Pass — the answer is balanced."). */
  readonly bare?: boolean;
}

/**
 * One labelled field of a reply.
 * @example readField('{"verdict": "Fail", "reason": "…"}', FIELD_KEYS.verdict, VERDICT_TABLE, json) // { label: 'Fail', raw: 'Fail' }
 */
export function readField<L extends string>(
  text: string,
  keys: ReadonlySet<string>,
  table: LabelTable<L>,
  json: Readonly<Record<string, unknown>> | undefined,
  options: FieldOptions = {},
): FieldReading<L> {
  const fromJson = jsonMembers(json, keys);
  if (fromJson.length > 0) {
    return agree(
      fromJson.map((v) => {
        const t = jsonText(v);
        return t === undefined ? { label: INVALID, raw: excerpt(JSON.stringify(v) ?? '') } : readOne(t, table);
      }),
      text,
    );
  }
  const lines = labelledLines(text).filter((l) => keys.has(l.key) && l.value !== '');
  if (lines.length > 0) return agree(lines.map((l) => readOne(l.value, table)), text);
  if (options.bare) {
    const first = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
    const m = matchValue(first, table);
    if (m.kind === 'label' && m.closed) return { label: m.label, raw: trimValue(stripMarkup(first)) };
  }
  return { label: INVALID, raw: excerpt(text) };
}

/** A free-text field (step 1's core issue): the JSON member or the labelled line, non-blank. */
export function readText(text: string, keys: ReadonlySet<string>, json: Readonly<Record<string, unknown>> | undefined): string | null {
  const fromJson = jsonMembers(json, keys).find((v): v is string => typeof v === 'string' && v.trim() !== '');
  if (fromJson !== undefined) return fromJson.trim();
  const line = labelledLines(text).find((l) => keys.has(l.key) && l.value !== '');
  return line ? trimValue(stripMarkup(line.value)) : null;
}

/** A sentence as quoted in a reply: surrounding quotes dropped, its own punctuation kept. */
function unquote(s: string): string {
  return stripMarkup(s).trim().replace(/^["'“”「『]+|["'“”」』]+$/gu, '').trim();
}

/** NONE_WORDS folded, once: isNone runs for every sentence of every step-3 reply. */
const NONE_FOLDED: ReadonlySet<string> = new Set(NONE_WORDS.map(fold));

function isNone(s: string): boolean {
  const f = fold(trimValue(stripMarkup(s)));
  return f === '' || NONE_FOLDED.has(f);
}

/**
 * Step 3's offending sentences: a JSON list, a "None" string, or a labelled line with bullet
 * lines under it. `undefined` when the reply names no sentence field at all; [] for "none".
 */
export function readSentences(text: string, json: Readonly<Record<string, unknown>> | undefined): string[] | undefined {
  const keys = FIELD_KEYS.sentences;
  const fromJson = jsonMembers(json, keys);
  if (fromJson.length > 0) {
    const v = fromJson[0];
    if (Array.isArray(v)) return v.filter((s): s is string => typeof s === 'string' && !isNone(s)).map((s) => s.trim());
    if (typeof v === 'string') return isNone(v) ? [] : [v.trim()];
    if (v === null) return [];
    return undefined;
  }
  const line = labelledLines(text).find((l) => keys.has(l.key));
  if (!line) return undefined;
  if (line.value !== '') return isNone(line.value) ? [] : [unquote(line.value)];
  return line.items.filter((s) => !isNone(s)).map(unquote);
}
