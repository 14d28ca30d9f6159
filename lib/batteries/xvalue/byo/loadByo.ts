/**
 * Reading verdict files (JSONL or CSV, README.md "Bring your own verdicts") into raw rows with
 * their lines. A CSV cell is text; an empty cell is "not given".
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { CampaignFileError, jsonSyntaxProblem } from '../../../api/battery.js';
import type { FileIssue } from '../../../api/battery.js';
import { parseCsv } from '../data/parseCsv.js';
import { qaFormatOf, readQaFormatFiles } from '../data/loadQaPairs.js';
import type { RawByoRow } from './byoRows.js';

/** The rows of one file's text, and the structural problems (bad JSON, a row of the wrong width). */
export function parseByoText(text: string, file: string, format: 'jsonl' | 'csv'): { rows: RawByoRow[]; issues: FileIssue[] } {
  const rows: RawByoRow[] = [];
  const issues: FileIssue[] = [];
  if (format === 'jsonl') {
    text.replace(/^\uFEFF/, '').split(/\r?\n/).forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        rows.push({ file, line: i + 1, value: JSON.parse(line) as unknown });
      } catch (err) {
        issues.push({ file, path: `line ${i + 1}`, message: `not valid JSON (${jsonSyntaxProblem(err)})` });
      }
    });
    if (rows.length === 0 && issues.length === 0) issues.push({ file, path: 'line 1', message: 'the file is empty; expected one verdict row per line as a JSON object' });
    return { rows, issues };
  }
  const { records, problems } = parseCsv(text);
  for (const p of problems) issues.push({ file, path: `line ${p.line}`, message: p.message });
  const [head, ...body] = records;
  if (!head) return { rows, issues: [...issues, { file, path: 'line 1', message: 'the file is empty; expected a header row' }] };
  const header = head.fields.map((h) => h.trim());
  for (const rec of body) {
    if (rec.fields.length !== header.length) {
      issues.push({ file, path: `line ${rec.line}`, message: `expected ${header.length} fields as in the header, got ${rec.fields.length}` });
      continue;
    }
    rows.push({ file, line: rec.line, value: Object.fromEntries(header.map((h, i) => [h, rec.fields[i]])) });
  }
  if (body.length === 0) issues.push({ file, path: 'line 2', message: 'the file has a header row and no verdict row; expected one row per model × QA pair × strategy below the header' });
  return { rows, issues };
}

/** The verdict files at `target`: the file, or every .jsonl/.csv under the folder, sorted. */
export async function findByoFiles(target: string): Promise<string[]> {
  const info = await stat(target).catch(() => undefined);
  if (!info) throw new CampaignFileError(`${target}: no such file or folder (expected verdicts as .jsonl or .csv)`);
  if (info.isFile()) return [target];
  const out: string[] = [];
  for (const e of (await readdir(target, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.isFile() && !e.name.startsWith('.') && qaFormatOf(e.name)) out.push(path.join(target, e.name));
  }
  if (out.length === 0) throw new CampaignFileError(`${target}: the folder holds no .jsonl or .csv file`);
  return out;
}

/** Reads every verdict file; unreadable ones and unsupported types are issues, in file order. */
export async function readByoFiles(files: readonly string[]): Promise<{ rows: RawByoRow[]; issues: FileIssue[] }> {
  const rows: RawByoRow[] = [];
  const issues: FileIssue[] = [];
  for await (const { file, format, text } of readQaFormatFiles(files, { file: 'verdict file', holds: 'verdicts' }, issues)) {
    const parsed = parseByoText(text, file, format);
    rows.push(...parsed.rows);
    issues.push(...parsed.issues);
  }
  return { rows, issues };
}
