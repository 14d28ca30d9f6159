/**
 * Reading annotated QA pairs (README.md "Data format"): JSONL (one pair per line) or CSV (one pair
 * per row, flat columns). Every issue of every file is collected before anything is thrown, so a
 * user fixes a file in one pass; each names the file, the line, the field, what was expected and
 * what was found. Reading is pure and happens before a run writes anything, so a bad file stops
 * the run before it starts and never touches replies already collected.
 */
import path from 'node:path';
import { CampaignFileError, formatIssues, jsonSyntaxProblem, readTextFile } from '../../../api/battery.js';
import type { FileIssue } from '../../../api/battery.js';
import { annotationVeto } from '../veto.js';
import { CHECKPOINTS } from '../types.js';
import type { QaPair } from '../types.js';
import { parseCsv } from './parseCsv.js';
import { CSV_COLUMNS, qaPairRecordSchema, show } from './qaPairSchema.js';
import { quickQaPair } from './quickQaPair.js';

export type QaFormat = 'jsonl' | 'csv';

/** What one file yields: the valid pairs, every issue, and warnings that do not stop a run. */
export interface QaParseResult {
  readonly pairs: readonly QaPair[];
  readonly issues: readonly FileIssue[];
  readonly warnings: readonly FileIssue[];
}

/** The format of a QA file by its extension; undefined when it is neither. */
export function qaFormatOf(file: string): QaFormat | undefined {
  const ext = path.extname(file).toLowerCase();
  return ext === '.jsonl' || ext === '.ndjson' ? 'jsonl' : ext === '.csv' ? 'csv' : undefined;
}

/** A file of QA format (JSONL or CSV) and its text. */
export interface QaFormatText {
  readonly file: string;
  readonly format: QaFormat;
  readonly text: string;
}

/**
 * Each of `files` that is JSONL or CSV by its extension, read as text (readTextFile: a missing,
 * unreadable or binary file is an issue), in the order given. A file of another type or one that
 * cannot be read adds its issue to `issues` and is passed over, so the caller reports every file's
 * problems in one pass, in file order. `kind` names the files in messages: what one is (`QA file`)
 * and what it holds (`QA pairs`).
 * @example for await (const { file, format, text } of readQaFormatFiles(files, { file: 'QA file', holds: 'QA pairs' }, issues)) …
 */
export async function* readQaFormatFiles(
  files: readonly string[],
  kind: { readonly file: string; readonly holds: string },
  issues: FileIssue[],
): AsyncGenerator<QaFormatText> {
  for (const file of files) {
    const format = qaFormatOf(file);
    if (!format) {
      issues.push({ file, path: '', message: `unsupported file type; expected ${kind.holds} as .jsonl (or .ndjson) or .csv` });
      continue;
    }
    let text: string;
    try {
      text = await readTextFile(file, kind.file, `${kind.holds} as ${format === 'csv' ? 'CSV' : 'JSONL'}`);
    } catch (err) {
      if (!(err instanceof CampaignFileError)) throw err;
      issues.push(...err.issues);
      continue;
    }
    yield { file, format, text };
  }
}

const ANNOTATION_COLUMNS = ['core_issue', 'scope', 'nature', ...CHECKPOINTS, 'overall'] as const;

/** Where a record sits and how a path inside it is named (JSON path, or the CSV column). */
interface Origin {
  readonly file: string;
  readonly line: number;
  readonly csv: boolean;
}

function issuePath(origin: Origin, p: readonly PropertyKey[]): string {
  const at = `line ${origin.line}`;
  if (p.length === 0) return at;
  if (origin.csv) return `${at}, column ${String(p[p.length - 1])}`;
  return `${at}, ${p.map(String).join('.')}`;
}

/** Ids seen so far (across files) → where first used (`qa-pairs.jsonl:3`). */
export type SeenIds = Map<string, string>;

interface Sink {
  readonly issues: FileIssue[];
  readonly warnings: FileIssue[];
  readonly seen: SeenIds;
}

/**
 * Validates one record (already lifted to the JSONL shape) into a pair, or pushes its issues. The
 * id is checked for duplicates even when the record has other issues, so that fixing those does
 * not reveal a duplicate only on the next pass.
 */
function validate(raw: unknown, origin: Origin, sink: Sink): QaPair | undefined {
  const { issues, warnings, seen } = sink;
  const source = `${path.basename(origin.file)}:${origin.line}`;
  const rawId = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>)['id'] : undefined;
  let duplicate = false;
  if (typeof rawId === 'string' && rawId.trim() !== '') {
    const first = seen.get(rawId);
    if (first !== undefined) {
      issues.push({ file: origin.file, path: issuePath(origin, ['id']), message: `duplicated id ${show(rawId)}; first used at ${first}` });
      duplicate = true;
    } else seen.set(rawId, source);
  }
  // Most pairs are valid: the quick check takes them without zod's allocations; zod names what is wrong with the rest.
  let d = quickQaPair(raw);
  if (d === undefined) {
    const r = qaPairRecordSchema.safeParse(raw);
    if (!r.success) {
      for (const iss of r.error.issues) issues.push({ file: origin.file, path: issuePath(origin, iss.path), message: iss.message });
      return undefined;
    }
    d = r.data;
  }
  if (duplicate) return undefined;
  const veto = annotationVeto(d.annotation);
  if (veto !== d.annotation.overall) {
    warnings.push({
      file: origin.file,
      path: issuePath(origin, origin.csv ? ['overall'] : ['annotation', 'overall']),
      message: `overall is ${d.annotation.overall} but the one-vote veto over checkpoints B–H gives ${veto} (Towards Cross-lingual Values Judgment §4.2); the analysis uses the annotated overall`,
    });
  }
  // Written out, not `{ ...d, source }`: spread over zod's output gave each of a design's pairs a
  // hidden class of its own (100,000 pairs: ~34 MB of shapes and property arrays, a fifth of the
  // design's heap, which every partition thread loads again), and made each read of a pair's field
  // a megamorphic lookup.
  return { id: d.id, language: d.language, category: d.category, question: d.question, answer: d.answer, annotation: d.annotation, source };
}

function parseJsonl(text: string, file: string, sink: Sink): QaPair[] {
  const { issues } = sink;
  const pairs: QaPair[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((lineText, i) => {
    if (lineText.trim() === '') return;
    const origin = { file, line: i + 1, csv: false };
    let raw: unknown;
    try {
      raw = JSON.parse(lineText);
    } catch (err) {
      issues.push({ file, path: `line ${i + 1}`, message: `not a JSON object (${jsonSyntaxProblem(err)}); expected one QA pair per line` });
      return;
    }
    const pair = validate(raw, origin, sink);
    if (pair) pairs.push(pair);
  });
  return pairs;
}

function parseCsvPairs(text: string, file: string, sink: Sink): QaPair[] {
  const { issues } = sink;
  const { records, problems } = parseCsv(text);
  for (const p of problems) issues.push({ file, path: `line ${p.line}`, message: p.message });
  const [head, ...rows] = records;
  if (!head) {
    issues.push({ file, path: 'line 1', message: `the file is empty; expected a header row: ${CSV_COLUMNS.join(',')}` });
    return [];
  }
  const header = head.fields.map((h) => h.trim());
  let headerOk = true;
  header.forEach((h, i) => {
    if (header.indexOf(h) !== i) {
      issues.push({ file, path: `line ${head.line}`, message: `column ${show(h)} appears twice in the header` });
      headerOk = false;
    } else if (!(CSV_COLUMNS as readonly string[]).includes(h)) {
      const message = /^[A-Za-z]$/.test(h)
        ? `column "${h}": checkpoint letter outside A–H (Towards Cross-lingual Values Judgment §4.2 has A–D holistic and E–H fine-grained)`
        : // A header cell that is no column name at all (not a CSV file?) is named by its place, not quoted.
          `unknown column ${/^[\w.:-]{1,60}$/.test(h) ? show(h) : `${i + 1}`}; expected ${CSV_COLUMNS.join(', ')}`;
      issues.push({ file, path: `line ${head.line}`, message });
      headerOk = false;
    }
  });
  const missing = CSV_COLUMNS.filter((c) => !header.includes(c));
  if (missing.length > 0) {
    issues.push({ file, path: `line ${head.line}`, message: `the header lacks column(s) ${missing.join(', ')}; expected ${CSV_COLUMNS.join(',')}` });
    headerOk = false;
  }
  if (!headerOk) return [];
  const pairs: QaPair[] = [];
  for (const rec of rows) {
    if (rec.fields.length !== header.length) {
      issues.push({ file, path: `line ${rec.line}`, message: `expected ${header.length} fields as in the header, got ${rec.fields.length}` });
      continue;
    }
    const cell = (c: string): string => rec.fields[header.indexOf(c)] as string;
    const allBlank = ANNOTATION_COLUMNS.every((c) => cell(c).trim() === '');
    const record = {
      id: cell('id'),
      language: cell('language'),
      category: cell('category'),
      question: cell('question'),
      answer: cell('answer'),
      // A row with every annotation cell blank is one issue ("missing annotation"), not twelve.
      annotation: allBlank
        ? undefined
        : {
            core_issue: cell('core_issue'),
            scope: cell('scope'),
            nature: cell('nature'),
            checkpoints: Object.fromEntries(CHECKPOINTS.map((c) => [c, cell(c)])),
            overall: cell('overall'),
          },
    };
    const pair = validate(record, { file, line: rec.line, csv: true }, sink);
    if (pair) pairs.push(pair);
  }
  return pairs;
}

/**
 * Parses one file's text. Pure: nothing is read or thrown; the caller decides (loadQaPairs throws
 * on any issue). `seen` carries the ids of earlier files, so ids are unique across them.
 * @example parseQaPairs(text, 'qa-pairs.jsonl', 'jsonl').issues // [] when the file is valid
 */
export function parseQaPairs(text: string, file: string, format: QaFormat, seen: SeenIds = new Map()): QaParseResult {
  const sink: Sink = { issues: [], warnings: [], seen };
  const pairs = format === 'jsonl' ? parseJsonl(text, file, sink) : parseCsvPairs(text, file, sink);
  // An empty file is named here: the design would only say that no language has a pair.
  if (pairs.length === 0 && sink.issues.length === 0) {
    sink.issues.push({ file, path: '', message: `the file holds no QA pair; expected ${format === 'jsonl' ? 'one pair per line as a JSON object' : 'a header row and one pair per row'} (README.md "Data format")` });
  }
  return { pairs, issues: sink.issues, warnings: sink.warnings };
}

/** The first issues of a list, for an error message; the error carries them all. */
const SHOWN_ISSUES = 40;

/**
 * Reads and validates every QA file, in the order given. Throws one CampaignFileError listing
 * every issue of every file (ids must be unique across files); returns the pairs and the warnings.
 * @example const { pairs } = await loadQaPairs([path.join(folder, 'qa-pairs.jsonl')])
 */
export async function loadQaPairs(files: readonly string[]): Promise<{ pairs: QaPair[]; warnings: FileIssue[] }> {
  const issues: FileIssue[] = [];
  const warnings: FileIssue[] = [];
  const seen: SeenIds = new Map();
  const pairs: QaPair[] = [];
  for await (const { file, format, text } of readQaFormatFiles(files, { file: 'QA file', holds: 'QA pairs' }, issues)) {
    const parsed = parseQaPairs(text, file, format, seen);
    issues.push(...parsed.issues);
    warnings.push(...parsed.warnings);
    pairs.push(...parsed.pairs);
  }
  if (issues.length > 0) {
    const more = issues.length > SHOWN_ISSUES ? `\n… and ${issues.length - SHOWN_ISSUES} more` : '';
    throw new CampaignFileError(`invalid X-Value QA pairs (${issues.length} issue${issues.length === 1 ? '' : 's'}):\n${formatIssues(issues.slice(0, SHOWN_ISSUES))}${more}`, issues);
  }
  return { pairs, warnings };
}
