/**
 * Validation of reply rows: each record against `byoRowSchema`, then across rows (one item, one
 * set of design factors; one row per item and attempt). A bad row is named (file, row, field, what
 * was expected, what was found) and left out; every valid row is kept.
 */
import type { z } from 'zod';
import { languageProblem, missingCells } from '../../../api/battery.js';
import type { FileIssue } from '../../../api/battery.js';
import { LANGUAGES } from '../types.js';
import { isJsonError, normalize, show } from './fieldValues.js';
import { BYO_COLUMNS, byoRowSchema } from './schema.js';
import type { ByoRowParsed } from './schema.js';
import { quickRow } from './quickRow.js';
import { withDefaults } from './schema.js';
import type { PreparedRow } from './rowLines.js';
import type { RawFile, SourcedRow } from './types.js';

/** The columns of the schema: any other is ignored and named in a warning. */
export const KNOWN_COLUMNS: ReadonlySet<string> = new Set(BYO_COLUMNS);

/** `row 12, field "language"` */
export function rowPath(row: number, field?: string): string {
  return field ? `row ${row}, field ${JSON.stringify(field)}` : `row ${row}`;
}

function issueMessage(issue: z.core.$ZodIssue, input: unknown): string {
  // A language the design does not know: the allowed codes and the close match (`jp` → ja), as every battery says it.
  if (issue.code === 'invalid_value' && issue.path.length === 1 && issue.path[0] === 'language' && input !== undefined) return languageProblem(input, LANGUAGES);
  const got = `got ${show(input)}`;
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return `missing; expected ${issue.expected}`;
      return `expected ${issue.expected === 'int' ? 'an integer' : issue.expected}, ${got}`;
    case 'invalid_value': {
      const expected = `one of ${issue.values.map((v) => String(v)).join(', ')}`;
      return input === undefined ? `missing; expected ${expected}` : `expected ${expected}; ${got}`;
    }
    default:
      return `${issue.message}; ${got}`;
  }
}

function valueAt(record: unknown, pathSegments: readonly PropertyKey[]): unknown {
  let v: unknown = record;
  for (const s of pathSegments) v = v === null || typeof v !== 'object' ? undefined : (v as Record<PropertyKey, unknown>)[s];
  return v;
}

function fieldPath(segments: readonly PropertyKey[]): string {
  return segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? String(s) : `.${String(s)}`)).join('');
}

/**
 * label_maps.sql reads which proposition the prompt listed second (Same Judgment, Different Yes §6); a label row that
 * gives no letters leaves that one habit out for its item (`missing`: counted and said once), but
 * letters that are given must make sense (else the message naming them). Undefined when fine.
 */
export function labelLetters(r: Pick<ByoRowParsed, 'constraint' | 'reading_map'>): 'missing' | string | undefined {
  if (r.constraint !== 'label') return undefined;
  const letters = r.reading_map?.letters;
  if (!letters) return 'missing';
  if (letters.length !== 2 || letters[0]?.proposition === letters[1]?.proposition) {
    return `a label item needs its two letters in listed order, one for P and one for notP; got ${show(letters)}`;
  }
  return undefined;
}

export interface ValidatedFile {
  readonly rows: SourcedRow[];
  readonly issues: FileIssue[];
  readonly warnings: string[];
  /** Columns the schema does not know (ignored), sorted. */
  readonly unknownColumns: string[];
  /** Label rows that give no reading_map.letters. */
  readonly labelsWithoutLetters: number;
}

/** The warning for label rows without letters (their items leave the second-listed preference out). */
export function noLettersWarning(file: string, count: number): string[] {
  if (count === 0) return [];
  return [`${file}: ${count} label row${count === 1 ? ' gives' : 's give'} no reading_map.letters: the second-listed preference (Same Judgment, Different Yes §6) leaves their items out; everything else is analysed`];
}

/**
 * The warning for columns the schema does not know. A header cell that is no column name at all (a
 * `.env` given by mistake: `OPENAI_API_KEY=sk-…`) is counted, never quoted.
 */
export function unknownColumnsWarning(file: string, columns: readonly string[]): string[] {
  if (columns.length === 0) return [];
  const names = columns.filter((c) => /^[\w.:-]{1,60}$/.test(c));
  const others = columns.length - names.length;
  const shown = [...names.map((c) => JSON.stringify(c)), ...(others > 0 ? [`${others} header cell${others > 1 ? 's' : ''} that ${others > 1 ? 'are' : 'is'} no column name (not shown)`] : [])];
  return [`${file}: ignored column${columns.length > 1 ? 's' : ''} ${shown.join(', ')} (not in schema/replies.schema.json)`];
}

/**
 * Checks every record of one file against the schema. With `onRow`, valid rows go to it as they
 * are found instead of into `rows` (the import keeps no copy of them).
 */
export function validateFile(raw: RawFile, onRow?: (row: SourcedRow) => void): ValidatedFile {
  const rows: SourcedRow[] = [];
  const emit = onRow ?? ((r: SourcedRow) => void rows.push(r));
  const issues: FileIssue[] = [];
  const unknown = new Set<string>();
  const fromCsv = raw.format === 'csv';
  let labelsWithoutLetters = 0;
  raw.records.forEach((record, index) => {
    const row = index + (raw.firstRow ?? 1);
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      issues.push({ file: raw.file, path: rowPath(row), message: `expected an object with the fields of schema/replies.schema.json, got ${show(record)}` });
      return;
    }
    // Most rows are valid: the hand-written check takes them without zod (quickRow.ts); a row it
    // declines goes through the schema, which names what is wrong.
    const quick = quickRow(record as Record<string, unknown>, fromCsv);
    if (quick) {
      for (const k in record) if (!KNOWN_COLUMNS.has(k)) unknown.add(k);
      const letters = labelLetters(quick);
      if (letters === 'missing') labelsWithoutLetters++;
      else if (letters) {
        issues.push({ file: raw.file, path: rowPath(row, 'reading_map.letters'), message: letters });
        return;
      }
      emit({ file: raw.file, row, value: quick });
      return;
    }
    const value: Record<string, unknown> = {};
    const rowIssues: FileIssue[] = [];
    for (const [k, v] of Object.entries(record as Record<string, unknown>)) {
      if (!KNOWN_COLUMNS.has(k)) {
        unknown.add(k);
        continue;
      }
      const n = normalize(k, v, fromCsv);
      if (isJsonError(n)) {
        rowIssues.push({ file: raw.file, path: rowPath(row, k), message: n.jsonError });
        continue;
      }
      // Null and absent are the same for optional fields; the schema says which may be missing.
      if (n !== null || k === 'text') value[k] = n;
    }
    const parsed = byoRowSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const input = valueAt(value, issue.path);
        rowIssues.push({ file: raw.file, path: rowPath(row, fieldPath(issue.path)), message: issueMessage(issue, input) });
      }
    } else {
      const letters = labelLetters(parsed.data);
      if (letters === 'missing') labelsWithoutLetters++;
      else if (letters) rowIssues.push({ file: raw.file, path: rowPath(row, 'reading_map.letters'), message: letters });
    }
    if (rowIssues.length > 0 || !parsed.success) {
      for (const issue of rowIssues) issues.push(issue);
      return;
    }
    emit({ file: raw.file, row, value: withDefaults(parsed.data) });
  });
  const unknownColumns = [...unknown].sort();
  return { rows, issues, warnings: [...unknownColumnsWarning(raw.file, unknownColumns), ...noLettersWarning(raw.file, labelsWithoutLetters)], unknownColumns, labelsWithoutLetters };
}

/** What the checks across rows read of a prepared row (packed rows give just this). */
export type ResolvedRow = Pick<PreparedRow, 'file' | 'row' | 'identity' | 'item_id' | 'prompt_key' | 'repeat' | 'attempt' | 'status' | 'okWithoutContent' | 'story' | 'story_group'>;

/** An item with more than one accepted row, and the attempt of its chosen reply (its lowest ok attempt; null when none is ok). */
export interface RetriedItem {
  readonly item_id: string;
  readonly attempt: number | null;
}

/** Where a row was: enough to name it, without keeping the row. */
interface Place {
  readonly file: string;
  readonly row: number;
}

function where(p: Place): string {
  return `${p.file} row ${p.row}`;
}

/**
 * Checks across rows, in file order: an item_id is one item (the same model, language and factors
 * on every row), a prompt_key is one prompt (the same, repeat aside), a story is in one story group,
 * and an item has one row per attempt. The first row wins; each later conflicting row is named with
 * the row it conflicts with. Rows are checked one at a time (`add`); only their ids are kept.
 */
export class RowResolver {
  readonly issues: FileIssue[] = [];
  // At a million rows, one object per item would be millions of long-lived objects for the garbage
  // collector to trace: each map holds a small integer, and what is known of an item or a prompt
  // sits in arrays indexed by it (places as a file index and a row number). An item's design
  // factors are kept as its identity string, shared with its prompt's where they agree (repeats).
  private readonly files: string[] = [];
  private readonly fileIndex = new Map<string, number>();
  private readonly items = new Map<string, number>();
  /** `ok`: 1 when the item's first row is an ok reply, else 0. */
  private readonly item = { identity: [] as string[], repeat: [] as number[], attempt: [] as number[], ok: [] as number[], file: [] as number[], row: [] as number[] };
  /** Attempts after an item's first, by item index: most items have one attempt. */
  private readonly retries = new Map<number, { readonly item_id: string; readonly attempts: Map<number, Place>; chosen: number | null }>();
  private readonly prompts = new Map<string, number>();
  private readonly prompt = { identity: [] as string[], file: [] as number[], row: [] as number[] };
  private readonly storyGroups = new Map<string, { group: string; at: Place }>();

  /**
   * Whether the row is its item's first (then it gives the item's prompt row), or undefined when
   * it conflicts with an earlier row (then it is in `issues`).
   */
  add(r: ResolvedRow): boolean | undefined {
    const it = this.items.get(r.item_id);
    if (it !== undefined && (this.item.identity[it] !== r.identity || this.item.repeat[it] !== r.repeat)) {
      return this.fail(r, 'item_id', `item ${r.item_id} has other design factors or another repeat at ${where(this.itemAt(it))}; one item_id is one item`);
    }
    const pr = this.prompts.get(r.prompt_key);
    if (pr !== undefined && this.prompt.identity[pr] !== r.identity) {
      const at = { file: this.files[this.prompt.file[pr] as number] as string, row: this.prompt.row[pr] as number };
      return this.fail(r, 'prompt_key', `prompt_key ${r.prompt_key} has other design factors at ${where(at)}; its repeats must differ in repeat only`);
    }
    if (r.okWithoutContent) {
      return this.fail(r, 'text', 'status is "ok" but there is neither text nor readings; expected the reply text, its readings, or status "error"');
    }
    // Same Judgment, Different Yes §5 reports by story group: a story belongs to one group in every cell.
    const seenStory = this.storyGroups.get(r.story);
    if (seenStory && seenStory.group !== r.story_group) {
      return this.fail(r, 'story_group', `story ${JSON.stringify(r.story)} is in group ${JSON.stringify(seenStory.group)} at ${where(seenStory.at)}; got ${JSON.stringify(r.story_group)}`);
    }
    const seenAttempt = it === undefined ? undefined : this.item.attempt[it] === r.attempt ? this.itemAt(it) : this.retries.get(it)?.attempts.get(r.attempt);
    if (seenAttempt) {
      return this.fail(r, 'attempt', `attempt ${r.attempt} of this item is already at ${where(seenAttempt)}; give repeats their own "repeat" and retries their own "attempt"`);
    }
    let file = this.fileIndex.get(r.file);
    if (file === undefined) {
      file = this.files.push(r.file) - 1;
      this.fileIndex.set(r.file, file);
    }
    if (it === undefined) {
      this.items.set(r.item_id, this.item.identity.length);
      // The prompt's string when the prompt is known (equal, checked above): one copy per prompt.
      this.item.identity.push(pr === undefined ? r.identity : (this.prompt.identity[pr] as string));
      this.item.repeat.push(r.repeat);
      this.item.attempt.push(r.attempt);
      this.item.ok.push(r.status === 'ok' ? 1 : 0);
      this.item.file.push(file);
      this.item.row.push(r.row);
    } else {
      let more = this.retries.get(it);
      if (!more) {
        more = { item_id: r.item_id, attempts: new Map(), chosen: this.item.ok[it] === 1 ? (this.item.attempt[it] as number) : null };
        this.retries.set(it, more);
      }
      more.attempts.set(r.attempt, { file: r.file, row: r.row });
      if (r.status === 'ok' && (more.chosen === null || r.attempt < more.chosen)) more.chosen = r.attempt;
    }
    if (!seenStory) this.storyGroups.set(r.story, { group: r.story_group, at: { file: r.file, row: r.row } });
    if (pr === undefined) {
      this.prompts.set(r.prompt_key, this.prompt.identity.length);
      this.prompt.identity.push(r.identity);
      this.prompt.file.push(file);
      this.prompt.row.push(r.row);
    }
    return it === undefined;
  }

  /**
   * The items with more than one accepted row and the attempt of each one's chosen reply (as
   * chosen_replies.sql chooses: the lowest ok attempt). Every other item's one row is its chosen
   * reply when it is ok, so TableSink needs only these to keep the chosen reply's rule readings.
   */
  retriedItems(): RetriedItem[] {
    return [...this.retries.values()].map((m) => ({ item_id: m.item_id, attempt: m.chosen }));
  }

  /**
   * The items of each model missing in a language the model has rows in (a cell of the design the
   * rows claim): the item is its story, question form, answer constraint, keying and option order;
   * the concept pair and the wording family (`construction`) are a language's own, and which
   * prompts are repeated is drawn per language.
   */
  missingCells(): ReturnType<typeof missingCells> {
    const { identity } = this.item;
    return missingCells(
      (function* () {
        for (let i = 0; i < identity.length; i++) {
          const f = (identity[i] as string).split('\u0000');
          yield [f[0] as string, [f[2], f[5], f[6], f[7], f[8]].join('\u0000'), f[1] as string] as const;
        }
      })(),
    );
  }

  private itemAt(i: number): Place {
    return { file: this.files[this.item.file[i] as number] as string, row: this.item.row[i] as number };
  }

  private fail(r: ResolvedRow, field: string, message: string): undefined {
    this.issues.push({ file: r.file, path: rowPath(r.row, field), message });
    return undefined;
  }
}
