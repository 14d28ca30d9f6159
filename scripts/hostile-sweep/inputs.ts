/** Making a case's inputs: a copy of a demo, and edits of its files as text, as YAML or at the file system. */
import { execFileSync } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parse as parseYaml, stringify } from 'yaml';
import { ROOT } from './types.js';

export type Doc = Record<string, unknown>;
export const STUDY_FILES: Record<string, { main: string; data: string }> = {
  far6: { main: 'demo.yaml', data: 'stories.yaml' },
  xvalue: { main: 'demo.yaml', data: 'qa-pairs.jsonl' },
  ptrue: { main: 'demo.yaml', data: 'items.jsonl' },
};

/** Copies examples/<study> into dir with data_dir pointing inside it, and a smaller design so that a plan is quick. */
export async function copyStudy(study: string, dir: string): Promise<void> {
  await cp(path.join(ROOT, 'examples', study), dir, { recursive: true });
  const file = path.join(dir, 'demo.yaml');
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/^data_dir: .*$/m, 'data_dir: data'));
}

export async function editText(file: string, edit: (t: string) => string | Buffer): Promise<void> {
  await writeFile(file, edit(await readFile(file, 'utf8')));
}
export async function editDoc(file: string, edit: (d: Doc) => void): Promise<void> {
  const doc = parseYaml(await readFile(file, 'utf8')) as Doc;
  edit(doc);
  await writeFile(file, stringify(doc));
}
export const RAW = '__SWEEP_RAW__';
/** Sets a field to a raw YAML scalar (`.nan`, `1e400`, `0x10` …), which a JS value cannot express. */
export async function setRaw(file: string, at: (string | number)[], raw: string): Promise<void> {
  const doc = parseYaml(await readFile(file, 'utf8')) as Doc;
  let node: Record<string | number, unknown> = doc;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[at[at.length - 1]!] = RAW;
  await writeFile(file, stringify(doc).replace(RAW, raw));
}
export function mkfifo(file: string): void {
  execFileSync('mkfifo', [file]);
}

export const plan = (): string[] => ['plan', 'demo.yaml'];

/** RFC 4180 CSV (quoted fields, doubled quotes, newlines inside quotes): enough to rewrite the example files. */
export function parseCsv(text: string): string[][] {
  const out: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      out.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field || row.length) {
    row.push(field);
    out.push(row);
  }
  return out.filter((r) => r.length > 1 || r[0] !== '');
}

/** A tiny X-Value campaign (one model, one language) for flags of `run`, so that an accepted flag finishes quickly. */
export async function tinyCampaign(dir: string): Promise<void> {
  await copyStudy('xvalue', dir);
  await editDoc(path.join(dir, 'demo.yaml'), (d) => {
    (d.design as Doc).languages = ['en'];
    d.models = (d.models as Doc[]).slice(0, 1);
  });
}

/** Writes the rows of a CSV file as Parquet through DuckDB, as a user's pipeline would: `select` reads from `rows` (the types DuckDB detects). */
export async function toParquet(csv: string, parquet: string, select: string): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  try {
    const quote = (p: string): string => `'${p.replace(/'/g, "''")}'`;
    await connection.run(`CREATE TABLE rows AS SELECT * FROM read_csv(${quote(csv)}, header = true)`);
    await connection.run(`COPY (${select}) TO ${quote(parquet)} (FORMAT parquet)`);
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}
