/**
 * The items file of the P(True) battery (README "Items"): JSONL, one base item a line, or CSV with
 * one column per field and language. Both become the same records and pass the same checks; every
 * problem of the file is reported at once, as file, line (and item id), field, what was expected
 * and what was found — never the whole file.
 */
import { CampaignFileError, formatIssues, isLanguageCode, jsonSyntaxProblem, kindOf, shortValue } from '../../../api/battery.js';
import type { FileIssue, LanguageCode } from '../../../api/battery.js';
import { BENCHMARK_KINDS, OPTION_LETTERS, type BaseItem, type BenchmarkKind } from '../types.js';
import { parseCsv } from './csv.js';

export interface ParseItemsOptions {
  /** The design's question and response languages: every item must have a question (and options) in each. */
  readonly languages: readonly LanguageCode[];
  /** Languages a key may name (default: the design's). A key outside them is an unknown language. */
  readonly known?: readonly LanguageCode[];
}

export type ItemsFormat = 'jsonl' | 'csv';

const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;
const FIELDS = ['id', 'benchmark', 'kind', 'question', 'options', 'answer', 'aliases', 'subject', 'content_language'] as const;

/** A short description of a value for messages: never more than 60 characters of it. */
export function describeValue(value: unknown): string {
  if (Array.isArray(value)) return `a list of ${value.length}`;
  return shortValue(value);
}

/** A key or cell as a message names it: at most 60 characters, quoted when cut or odd. */
function named(key: string): string {
  return /^[\w.:-]{1,60}$/.test(key) ? key : shortValue(key);
}

interface Ctx {
  readonly file: string;
  readonly issues: FileIssue[];
  readonly opts: ParseItemsOptions;
  readonly known: ReadonlySet<string>;
}

/** One record to check: where it is, and how its fields are named in the file (JSON path or CSV column). */
interface Located {
  readonly line: number;
  readonly record: Record<string, unknown>;
  /** The file's name for a field: `question.zh` in JSONL, `question_zh` in CSV. */
  readonly name: (field: string, language?: string, letter?: string) => string;
}

function issue(ctx: Ctx, at: Located, id: unknown, field: string, message: string): void {
  const who = typeof id === 'string' && id !== '' ? ` (${named(id)})` : '';
  ctx.issues.push({ file: ctx.file, path: `line ${at.line}${who}${field ? `: ${field}` : ''}`, message });
}

function text(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** Checks the language keys of a per-language field; returns the map of known ones. */
function languageMap(ctx: Ctx, at: Located, id: unknown, field: string, value: unknown, needAll: boolean): Map<string, unknown> | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    issue(ctx, at, id, at.name(field), `expected a mapping language → value, got ${describeValue(value)}`);
    return null;
  }
  const out = new Map<string, unknown>();
  for (const [lang, v] of Object.entries(value as Record<string, unknown>)) {
    if (!ctx.known.has(lang)) {
      const shape = isLanguageCode(lang) ? '' : ' (not a language code)';
      issue(ctx, at, id, at.name(field, lang), `unknown language "${lang}"${shape}; use one of ${[...ctx.known].join(', ')}`);
      continue;
    }
    out.set(lang, v);
  }
  if (needAll) {
    const missing = ctx.opts.languages.filter((l) => !out.has(l));
    if (missing.length > 0) {
      issue(ctx, at, id, at.name(field), `no ${missing.join(', ')} text; the design asks for ${ctx.opts.languages.join(', ')}`);
    }
  }
  return out;
}

function checkRecord(ctx: Ctx, at: Located, seen: Map<string, number>): BaseItem | null {
  const r = at.record;
  const before = ctx.issues.length;
  const id = r.id;
  for (const key of Object.keys(r)) {
    if (!(FIELDS as readonly string[]).includes(key)) issue(ctx, at, id, named(key), `unexpected field; an item has ${FIELDS.join(', ')}`);
  }
  if (!text(id) || !ID.test(id)) {
    issue(ctx, at, undefined, at.name('id'), `expected an item id (letters, digits, _ . : -), got ${describeValue(id)}`);
  } else if (seen.has(id)) {
    issue(ctx, at, id, at.name('id'), `duplicate id; line ${seen.get(id)} has it already`);
  } else seen.set(id, at.line);
  const benchmark = r.benchmark;
  if (!text(benchmark) || !ID.test(benchmark)) issue(ctx, at, id, at.name('benchmark'), `expected a benchmark name (letters, digits, _ . : -), got ${describeValue(benchmark)}`);
  const kind = r.kind;
  if (!(BENCHMARK_KINDS as readonly unknown[]).includes(kind)) issue(ctx, at, id, at.name('kind'), `expected one of ${BENCHMARK_KINDS.join(', ')}, got ${describeValue(kind)}`);

  const question = new Map<string, string>();
  for (const [lang, q] of languageMap(ctx, at, id, 'question', r.question, true) ?? []) {
    if (text(q)) question.set(lang, q);
    else issue(ctx, at, id, at.name('question', lang), `expected the question as text, got ${describeValue(q)}`);
  }

  let options: Record<string, string[]> | null = null;
  let answerLetter: string | null = null;
  const answers: Record<string, string> = {};
  if (kind === 'multiple_choice') {
    options = {};
    let count: number | null = null;
    if (r.options === undefined) issue(ctx, at, id, at.name('options'), 'missing; a multiple_choice item lists its options per language');
    else {
      for (const [lang, list] of languageMap(ctx, at, id, 'options', r.options, true) ?? []) {
        if (!Array.isArray(list) || list.length < 2 || list.length > OPTION_LETTERS.length || !list.every(text)) {
          issue(ctx, at, id, at.name('options', lang), `expected 2–${OPTION_LETTERS.length} options as non-empty texts, got ${describeValue(list)}`);
          continue;
        }
        if (count !== null && list.length !== count) {
          issue(ctx, at, id, at.name('options', lang), `${list.length} options, but another language has ${count}; options must be parallel`);
          continue;
        }
        count = list.length;
        options[lang] = list as string[];
      }
    }
    const a = r.answer;
    if (a === undefined || a === null || a === '') {
      issue(ctx, at, id, at.name('answer'), `no gold answer; expected the letter of the correct option${count ? ` (A–${OPTION_LETTERS[count - 1]})` : ''}`);
    } else if (typeof a !== 'string' || !(OPTION_LETTERS as readonly string[]).includes(a.trim().toUpperCase())) {
      issue(ctx, at, id, at.name('answer'), `expected an option letter A–J, got ${describeValue(a)}`);
    } else {
      answerLetter = a.trim().toUpperCase();
      const index = OPTION_LETTERS.indexOf(answerLetter as (typeof OPTION_LETTERS)[number]);
      if (count !== null && index >= count) {
        issue(ctx, at, id, at.name('answer'), `option "${answerLetter}" is out of range: the item has ${count} options (A–${OPTION_LETTERS[count - 1]})`);
      }
    }
  } else if (kind === 'short_answer') {
    if (r.options !== undefined && r.options !== null) issue(ctx, at, id, at.name('options'), 'a short_answer item has no options; use kind multiple_choice, or remove them');
    const a = r.answer;
    if (a === undefined || a === null || a === '') {
      issue(ctx, at, id, at.name('answer'), 'no gold answer; expected the reference answer (English) as text, or a mapping language → answer');
    } else if (typeof a === 'string') {
      if (text(a)) answers.en = a.trim();
      else issue(ctx, at, id, at.name('answer'), 'the gold answer is blank');
    } else {
      for (const [lang, v] of languageMap(ctx, at, id, 'answer', a, false) ?? []) {
        if (text(v)) answers[lang] = v.trim();
        else issue(ctx, at, id, at.name('answer', lang), `expected the answer as text, got ${describeValue(v)}`);
      }
      if (Object.keys(answers).length === 0 && ctx.issues.length === before) issue(ctx, at, id, at.name('answer'), 'no gold answer in any language');
    }
  }

  const aliases = r.aliases ?? [];
  if (!Array.isArray(aliases) || !aliases.every(text)) issue(ctx, at, id, at.name('aliases'), `expected a list of non-empty texts, got ${describeValue(aliases)}`);
  const subject = r.subject ?? null;
  if (subject !== null && !text(subject)) issue(ctx, at, id, at.name('subject'), `expected the subject group as text, got ${describeValue(subject)}`);
  const contentLanguage = r.content_language ?? null;
  if (contentLanguage !== null && !(typeof contentLanguage === 'string' && ctx.known.has(contentLanguage))) {
    issue(ctx, at, id, at.name('content_language'), `unknown language ${describeValue(contentLanguage)}; use one of ${[...ctx.known].join(', ')}`);
  }
  if (ctx.issues.length > before) return null;
  return {
    id: id as string,
    benchmark: benchmark as string,
    kind: kind as BenchmarkKind,
    question: Object.fromEntries(question),
    options,
    answerLetter,
    answers,
    aliases: (aliases as string[]).map((s) => s.trim()),
    subject: subject as string | null,
    contentLanguage: contentLanguage as string | null,
  };
}

const jsonlName = (field: string, language?: string): string => (language ? `${field}.${language}` : field);

/** Records of a JSONL file: one JSON object a line; blank lines are skipped. */
function jsonlRecords(ctx: Ctx, textIn: string): Located[] {
  const out: Located[] = [];
  textIn.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    const at: Located = { line: i + 1, record: {}, name: jsonlName };
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      issue(ctx, at, undefined, '', `not valid JSON (${jsonSyntaxProblem(err)}); expected one item per line`);
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      // The kind only: a whole line of the file is never quoted.
      issue(ctx, at, undefined, '', `expected a JSON object, got ${kindOf(value)}`);
      return;
    }
    out.push({ ...at, record: value as Record<string, unknown> });
  });
  return out;
}

const CSV_COLUMN = /^(question|answer|option_([a-j]))_([a-z]{2,3}(?:-[a-z0-9]{2,8})*)$/;

/**
 * Records of a CSV file. Columns: id, benchmark, kind, subject, content_language, answer (the
 * option letter, or the English reference), aliases (separated by `|`), `question_<lang>`,
 * `answer_<lang>` (short answer, per language) and `option_<a…j>_<lang>`. Empty cells are absent.
 */
function csvRecords(ctx: Ctx, textIn: string): Located[] {
  let rows;
  try {
    rows = parseCsv(textIn);
  } catch (err) {
    ctx.issues.push({ file: ctx.file, path: '', message: (err as Error).message });
    return [];
  }
  const [header, ...body] = rows;
  if (!header) return [];
  const columns = header.fields.map((c) => c.trim());
  const name = (field: string, language?: string, letter?: string): string =>
    field === 'options' ? `option_${letter ? letter.toLowerCase() : '*'}_${language ?? '*'}` : language ? `${field}_${language}` : field;
  columns.forEach((c, i) => {
    if (!(FIELDS as readonly string[]).includes(c) && !CSV_COLUMN.test(c)) {
      // A header cell that is no column name at all (not a CSV file?) is named by its place, not quoted.
      const which = /^[\w.:-]{1,60}$/.test(c) ? c : `column ${i + 1}`;
      ctx.issues.push({ file: ctx.file, path: `line ${header.line}: ${which}`, message: 'unknown column; use id, benchmark, kind, subject, content_language, answer, aliases, question_<lang>, answer_<lang>, option_<a–j>_<lang>' });
    }
  });
  return body.map((row) => {
    const record: Record<string, unknown> = {};
    const question: Record<string, string> = {};
    const answerBy: Record<string, string> = {};
    const options: Record<string, string[]> = {};
    columns.forEach((c, i) => {
      const cell = (row.fields[i] ?? '').trim();
      if (cell === '') return;
      const m = CSV_COLUMN.exec(c);
      if (!m) {
        // An unknown column is reported once, from the header.
        if (!(FIELDS as readonly string[]).includes(c)) return;
        record[c] = c === 'aliases' ? cell.split('|').map((s) => s.trim()) : cell;
        return;
      }
      const [, what, letter, lang] = m as unknown as [string, string, string | undefined, string];
      if (what === 'question') question[lang] = cell;
      else if (what === 'answer') answerBy[lang] = cell;
      else options[lang] = Object.assign(options[lang] ?? [], { [letter!.charCodeAt(0) - 97]: cell });
    });
    if (Object.keys(question).length > 0) record.question = question;
    if (Object.keys(options).length > 0) record.options = Object.fromEntries(Object.entries(options).map(([l, o]) => [l, Array.from(o, (v) => v ?? '')]));
    if (Object.keys(answerBy).length > 0) record.answer = { ...(typeof record.answer === 'string' ? { en: record.answer } : {}), ...answerBy };
    return { line: row.line, record, name };
  });
}

/**
 * Parses and checks an items file's text; throws one CampaignFileError listing every problem.
 * @example parseItems(text, 'items.jsonl', 'jsonl', { languages: ['en', 'ko'] })
 */
export function parseItems(textIn: string, file: string, format: ItemsFormat, opts: ParseItemsOptions): BaseItem[] {
  const ctx: Ctx = { file, issues: [], opts, known: new Set([...(opts.known ?? []), ...opts.languages]) };
  const records = format === 'csv' ? csvRecords(ctx, textIn) : jsonlRecords(ctx, textIn);
  const seen = new Map<string, number>();
  const items: BaseItem[] = [];
  for (const at of records) {
    const item = checkRecord(ctx, at, seen);
    if (item) items.push(item);
  }
  if (ctx.issues.length === 0 && items.length === 0) ctx.issues.push({ file, path: '', message: 'no items; expected one base item per line' });
  if (ctx.issues.length > 0) {
    const n = ctx.issues.length;
    throw new CampaignFileError(`${file}: ${n} problem${n === 1 ? '' : 's'} in the items\n${formatIssues(ctx.issues)}`, ctx.issues);
  }
  return items;
}
