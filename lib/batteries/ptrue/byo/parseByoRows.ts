/**
 * Bring your own P(True) rows (`sondage analyze` with rows collected elsewhere): one
 * row per model × item × question language × response language × verifier language, with the
 * reply's correctness and the verifier copy's P(True). JSONL or CSV; every problem is reported at
 * once with file, line and field. Languages are those of the design (PTRUE_LANGUAGES); a reply
 * needs a copy for each verifier language its model has in the file (a missing copy would
 * silently unbalance the Q × R × V cells); an item a model lacks at one q × r the model has
 * elsewhere is a missing cell, listed as a notice.
 *
 * | field            | required | meaning                                                          |
 * |------------------|----------|------------------------------------------------------------------|
 * | item             | yes      | base item id (the same across languages)                         |
 * | model            | yes      | the model under test                                              |
 * | q, r, v          | yes      | question, requested response and verifier language codes         |
 * | correct          | yes      | 1/0, true/false: the reply's correctness (shared by its v copies) |
 * | p_true           | yes      | P(True) in [0, 1]; empty or null for an invalid probe reading     |
 * | benchmark        | no       | default `byo`                                                     |
 * | stratum          | no       | content subset or subject group                                   |
 * | content_language | no       | the item's content language (LSQA)                                |
 * | realised         | no       | the language the reply is written in (the §6.6 view)             |
 * | exact            | no       | whether P(True) is exact (false: bounded by a top-k)              |
 * | correct_alt      | no       | a second correctness (the judge on multiple choice, §6.2)         |
 */
import {
  CampaignFileError,
  NOTICE_KIND,
  formatIssues,
  isLanguageCode,
  jsonSyntaxProblem,
  kindOf,
  looksLikeSecret,
  languageProblem,
  missingCells,
} from '../../../api/battery.js';
import type { ByoIssue, FileIssue } from '../../../api/battery.js';
import { PTRUE_LANGUAGES } from '../types.js';
import type { PtrueRow } from '../analysis/types.js';
import { inCampaignOrder } from '../analysis/views.js';
import { parseCsv } from '../data/csv.js';
import { describeValue } from '../data/parseItems.js';

/** A probability as a CSV or JSON text writes it: 0.67, .5, 1, 6.7e-1. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export const BYO_FIELDS = ['item', 'model', 'q', 'r', 'v', 'correct', 'p_true', 'benchmark', 'stratum', 'content_language', 'realised', 'exact', 'correct_alt'] as const;
const REQUIRED = ['item', 'model', 'q', 'r', 'v', 'correct', 'p_true'] as const;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

export const BYO_FORMAT = 'rows (JSONL or CSV): item, model, q, r, v, correct, p_true [, benchmark, stratum, content_language, realised, exact, correct_alt]';

function boolOf(v: unknown): boolean | null | undefined {
  if (v === true || v === 1 || v === '1' || v === 'true' || v === 'True' || v === 'TRUE') return true;
  if (v === false || v === 0 || v === '0' || v === 'false' || v === 'False' || v === 'FALSE') return false;
  if (v === null || v === undefined || v === '') return null;
  return undefined;
}

function checkRow(file: string, line: number, rec: Record<string, unknown>, issues: FileIssue[]): PtrueRow | null {
  const before = issues.length;
  const at = (field: string, message: string) => issues.push({ file, path: `line ${line}: ${field}`, message });
  // A field that is no name at all (a .env given by mistake: `OPENAI_API_KEY=sk-…`) is never quoted.
  for (const k of Object.keys(rec)) if (!(BYO_FIELDS as readonly string[]).includes(k)) at(/^[\w.:-]{1,60}$/.test(k) ? k : 'a field that is no field name (not shown)', `unexpected field; a row has ${BYO_FIELDS.join(', ')}`);
  for (const k of REQUIRED) if (!(k in rec) || (rec[k] === '' && k !== 'p_true') || (rec[k] === null && k !== 'p_true')) at(k, 'missing');
  const text = (k: string): string | null => (typeof rec[k] === 'string' && rec[k] !== '' ? (rec[k] as string) : typeof rec[k] === 'number' ? String(rec[k]) : null);
  const model = text('model');
  // A key pasted into the column (`sk-…`) passes the folder rule and would be printed in every result table.
  if (model !== null && looksLikeSecret(model)) at('model', `${describeValue(model)}; expected the model's name`);
  else if (model !== null && !SEGMENT.test(model)) at('model', `expected letters, digits, ".", "_" or "-" (it names a folder), got ${describeValue(model)}`);
  for (const k of ['q', 'r', 'v', 'content_language', 'realised'] as const) {
    const l = text(k);
    if (l === null || (k === 'realised' && l === 'und')) continue;
    // q, r, v and the written language are the design's; an item's content language may be any (LSQA).
    if (k === 'content_language' ? !isLanguageCode(l) : !(PTRUE_LANGUAGES as readonly string[]).includes(l)) at(k, languageProblem(l, k === 'realised' ? [...PTRUE_LANGUAGES, 'und'] : PTRUE_LANGUAGES));
  }
  const correct = boolOf(rec.correct);
  if ('correct' in rec && rec.correct !== '' && rec.correct !== null && (correct === undefined || correct === null)) at('correct', `expected 1/0 or true/false, got ${describeValue(rec.correct)}`);
  const rawP = rec.p_true;
  let p: number | null = null;
  if (rawP !== null && rawP !== undefined && rawP !== '') {
    // A decimal number only: Number() also reads "0x1", "0b1" and "1e0" forms and " " as 0, and a
    // hexadecimal cell taken as P(True) = 1 would be a silently wrong reading.
    p = typeof rawP === 'number' ? rawP : typeof rawP === 'string' && DECIMAL.test(rawP.trim()) ? Number(rawP) : NaN;
    if (!Number.isFinite(p) || p < 0 || p > 1) at('p_true', `expected a probability in [0, 1] (empty for an invalid reading), got ${describeValue(rawP)}`);
  }
  for (const k of ['exact', 'correct_alt'] as const) if (boolOf(rec[k]) === undefined) at(k, `expected 1/0 or true/false, got ${describeValue(rec[k])}`);
  if (issues.length > before) return null;
  return {
    model: model as string,
    benchmark: text('benchmark') ?? 'byo',
    base_item: text('item') as string,
    stratum: text('stratum'),
    content_language: text('content_language'),
    q: text('q') as string,
    r: text('r') as string,
    v: text('v') as string,
    correct: correct as boolean,
    p_true: p,
    realised: text('realised'),
    exact: boolOf(rec.exact) ?? null,
    correct_alt: boolOf(rec.correct_alt) ?? null,
  };
}

/**
 * Validates BYO rows and converts them to analysis rows.
 * @throws CampaignFileError listing every problem: bad fields, duplicate rows, verifier copies
 *   of one reply that disagree on its correctness (correctness belongs to the reply, §5), and
 *   replies missing a verifier copy. Missing cells (checkByoRows' notices) refuse nothing.
 */
export function parseByoRows(text: string, file: string, format: 'jsonl' | 'csv'): PtrueRow[] {
  const { rows, issues } = checkByoRows(text, file, format);
  const bad = issues.filter((i) => i.kind !== NOTICE_KIND);
  if (bad.length > 0) throw new CampaignFileError(`${file}: ${bad.length} problem${bad.length === 1 ? '' : 's'} in the rows\n${formatIssues(bad.slice(0, 20))}${bad.length > 20 ? `\n… and ${bad.length - 20} more` : ''}`, bad);
  return rows;
}

/**
 * Every problem of the rows and the rows that have none: bad fields, duplicates, disagreeing
 * copies and incomplete replies (bad rows), and missing cells (notices, kind `missing cell`).
 * A file that cannot be parsed as CSV at all is one problem without a line.
 */
export function checkByoRows(text: string, file: string, format: 'jsonl' | 'csv'): { rows: PtrueRow[]; issues: ByoIssue[] } {
  const issues: ByoIssue[] = [];
  const records: { line: number; rec: Record<string, unknown> }[] = [];
  if (format === 'csv') {
    let parsed;
    try {
      parsed = parseCsv(text);
    } catch (err) {
      return { rows: [], issues: [{ file, path: '', message: (err as Error).message, kind: 'unreadable' }] };
    }
    const [header, ...body] = parsed;
    const cols = header?.fields.map((c) => c.trim()) ?? [];
    for (const r of body) records.push({ line: r.line, rec: Object.fromEntries(cols.map((c, i) => [c, (r.fields[i] ?? '').trim()])) });
  } else {
    text.split(/\r?\n/).forEach((raw, i) => {
      if (raw.trim() === '') return;
      try {
        const v: unknown = JSON.parse(raw);
        if (v === null || typeof v !== 'object' || Array.isArray(v)) issues.push({ file, path: `line ${i + 1}`, message: `expected a JSON object, got ${kindOf(v)}`, kind: 'unreadable' });
        else records.push({ line: i + 1, rec: v as Record<string, unknown> });
      } catch (err) {
        issues.push({ file, path: `line ${i + 1}`, message: `not valid JSON (${jsonSyntaxProblem(err)})`, kind: 'unreadable' });
      }
    });
  }
  const rows: PtrueRow[] = [];
  const lines: number[] = [];
  const seen = new Map<string, number>();
  const replyCorrect = new Map<string, { correct: boolean; line: number }>();
  for (const { line, rec } of records) {
    const row = checkRow(file, line, rec, issues);
    if (!row) continue;
    const reply = [row.model, row.benchmark, row.base_item, row.q, row.r].join('\u0000');
    const key = `${reply}\u0000${row.v}`;
    if (seen.has(key)) {
      issues.push({ file, path: `line ${line}`, message: `duplicate row: line ${seen.get(key)} has the same model, item, q, r and v` });
      continue;
    }
    seen.set(key, line);
    const first = replyCorrect.get(reply);
    if (first && first.correct !== row.correct) {
      issues.push({ file, path: `line ${line}: correct`, message: `line ${first.line} gives the same reply (model, item, q, r) the other correctness; correctness is shared by a reply's verifier copies` });
      continue;
    }
    if (!first) replyCorrect.set(reply, { correct: row.correct, line });
    rows.push(row);
    lines.push(line);
  }
  if (issues.length === 0 && rows.length === 0) issues.push({ file, path: '', message: 'no rows', kind: 'unreadable' });
  issues.push(...incompleteReplies(file, rows, lines), ...missingCellNotices(file, rows));
  // After the checks, which name rows by their lines: the same rows give the same results in any file order.
  return { rows: inCampaignOrder(rows), issues };
}

const groupOf = (r: PtrueRow): string => `model ${r.model}, benchmark ${r.benchmark}`;
const replyOf = (r: PtrueRow): string => JSON.stringify([r.base_item, r.q, r.r]);

/**
 * The rows of complete replies only (`--drop-bad-rows`): an incomplete reply's other copies are
 * left out with it, so that every Q × R × V cell compares the same replies.
 */
export function completeReplies(rows: readonly PtrueRow[]): PtrueRow[] {
  const holes = new Set(missingCells(rows.map((r) => [groupOf(r), replyOf(r), r.v] as const)).map((m) => `${m.group}\u0000${m.unit}`));
  return rows.filter((r) => !holes.has(`${groupOf(r)}\u0000${replyOf(r)}`));
}

/** Replies without a copy in each verifier language their model (and benchmark) has in the file. */
function incompleteReplies(file: string, rows: readonly PtrueRow[], lines: readonly number[]): ByoIssue[] {
  const entries = rows.map((r) => [groupOf(r), replyOf(r), r.v] as const);
  const firstLine = new Map<string, number>();
  rows.forEach((r, i) => {
    const k = `${entries[i]![0]}\u0000${entries[i]![1]}`;
    if (!firstLine.has(k)) firstLine.set(k, lines[i] as number);
  });
  return missingCells(entries).map((m) => {
    const [item, q, r] = JSON.parse(m.unit) as [string, string, string];
    return {
      file,
      path: `line ${firstLine.get(`${m.group}\u0000${m.unit}`)}: v`,
      kind: 'incomplete reply' as const,
      message: `the reply of ${m.group}, item ${item}, q ${q}, r ${r} has no verifier copy in ${m.missing.join(', ')}; each reply needs one in every verifier language of the file (${m.present.join(', ')})`,
    };
  });
}

/** Items a model (and benchmark) lacks at a question × response language it has for other items. */
function missingCellNotices(file: string, rows: readonly PtrueRow[]): ByoIssue[] {
  return missingCells(rows.map((r) => [groupOf(r), r.base_item, `q ${r.q}, r ${r.r}`] as const)).map((m) => ({
    file,
    path: '',
    kind: 'missing cell' as const,
    message: `${m.group}: item ${m.unit} has no row at ${m.missing.join('; ')} (the file has ${m.present.join('; ')})`,
  }));
}
