/**
 * Reading reply files collected elsewhere with DuckDB (`read_json_objects`, `read_csv`,
 * `read_parquet`). Values keep the types the file gives them, so that validation can say "expected
 * an integer, got the string 'x'" instead of DuckDB guessing a column type and losing the row.
 */
import type { DuckDBValueConverter, JS } from '@duckdb/node-api';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { CampaignFileError, DuckDb, duckdbApi, jsonSyntaxProblem, spillingInstance, sqlString } from '../../../api/battery.js';
import type { FileIssue } from '../../../api/battery.js';
import type { ByoFormat, RawFile } from './types.js';

const EXTENSIONS: Readonly<Record<string, ByoFormat>> = {
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.json': 'json',
  '.csv': 'csv',
  '.parquet': 'parquet',
};

/** The format of a file by its extension, or undefined when it is not a replies file. */
export function formatOf(file: string): ByoFormat | undefined {
  return EXTENSIONS[path.extname(file).toLowerCase()];
}

/**
 * The replies files at `target`: the file itself, or every supported file under the folder
 * (recursively, hidden entries skipped), sorted so that row order and ids are reproducible.
 */
export async function findReplyFiles(target: string): Promise<string[]> {
  const info = await stat(target).catch(() => undefined);
  if (!info) throw new CampaignFileError(`${target}: no such file or folder (expected replies as .jsonl, .csv or .parquet)`);
  if (info.isFile()) {
    if (!formatOf(target)) {
      throw new CampaignFileError(`${target}: unsupported file type; expected .jsonl, .ndjson, .json, .csv or .parquet`);
    }
    return [target];
  }
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const full = path.join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile() && formatOf(full)) out.push(full);
    }
  };
  await walk(target);
  if (out.length === 0) throw new CampaignFileError(`${target}: the folder holds no .jsonl, .ndjson, .json, .csv or .parquet file`);
  return out;
}

function readerSql(file: string, format: ByoFormat): string {
  const f = sqlString(file);
  switch (format) {
    // One JSON text per record, parsed in JavaScript: DuckDB's column inference would coerce or null
    // a value of the wrong type instead of letting validation name it.
    case 'jsonl':
      return `SELECT json FROM read_json_objects(${f}, format = 'newline_delimited')`;
    case 'json':
      return `SELECT json FROM read_json_objects(${f}, format = 'auto')`;
    // Every field as text (validation converts per field), each record as one JSON text: one string
    // per row and JSON.parse is several times faster than DuckDB's per-value conversion, and exact
    // here, where every value is text or NULL.
    case 'csv':
      return `SELECT CAST(to_json(t) AS VARCHAR) AS json FROM read_csv(${f}, header = true, all_varchar = true, auto_detect = true) t`;
    case 'parquet':
      return `SELECT * FROM read_parquet(${f})`;
  }
}

/** Reads one file's records in file order. A file DuckDB cannot parse is a CampaignFileError naming it. */
export async function readReplyFile(db: DuckDb, file: string): Promise<RawFile> {
  const format = formatOf(file);
  if (!format) throw new CampaignFileError(`${file}: unsupported file type; expected .jsonl, .ndjson, .json, .csv or .parquet`);
  let rows: Record<string, unknown>[];
  try {
    rows = await db.all<Record<string, unknown>>(readerSql(file, format));
  } catch (err) {
    throw new CampaignFileError(`${file}: cannot be read as ${format.toUpperCase()}: ${(err as Error).message.trim()}`, [], { cause: err });
  }
  return { file, format, records: recordsOf(format, rows) };
}

/** Records per chunk of `readReplyChunks`: a chunk's raw records are freed once validated. */
export const CHUNK_ROWS = 2_000;

/**
 * Reads one file in chunks of `chunkRows` records, in file order; JavaScript holds one chunk at a
 * time. JSONL is read line by line in JavaScript; CSV, Parquet and JSON arrays are streamed from a
 * DuckDB query (no copy of the file in DuckDB: the scan runs as the chunks are taken).
 */
export async function* readReplyChunks(file: string, chunkRows = CHUNK_ROWS): AsyncGenerator<RawFile> {
  const format = formatOf(file);
  if (!format) throw new CampaignFileError(`${file}: unsupported file type; expected .jsonl, .ndjson, .json, .csv or .parquet`);
  if (format === 'jsonl') yield* readJsonlChunks(file, chunkRows);
  else yield* readDuckDbChunks(file, format, chunkRows);
}

// DuckDB's JS values, with BIGINT as numbers (as DuckDb.all gives them): validation names the type.
// DuckDB is imported when a file is read (lib/store/duckdbApi.ts): the Lambda worker bundles this module but ships no DuckDB.
async function jsConverter(): Promise<DuckDBValueConverter<JS>> {
  const { JSDuckDBValueConverter } = await duckdbApi();
  return (value, type, converter) => {
    const v = JSDuckDBValueConverter(value, type, converter);
    return typeof v === 'bigint' ? Number(v) : v;
  };
}

/** Parquet column types whose `to_json` text is not the value DuckDB's JS conversion gives. */
const JSON_UNSAFE_TYPE = /TIME|DATE|INTERVAL|BLOB|UUID|HUGEINT|DECIMAL|BIT|MAP\(|UNION|ENUM|VARINT/i;

/** A record's JSON text from DuckDB, where NaN and ±Infinity (not JSON) become strings that validation names. */
function parseRecordJson(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return JSON.parse(text.replace(/([:,[])(-?Infinity|NaN)(?=[,}\]])/g, '$1"$2"')) as unknown;
  }
}

async function* readDuckDbChunks(file: string, format: Exclude<ByoFormat, 'jsonl'>, chunkRows: number): AsyncGenerator<RawFile> {
  const unreadable = (err: unknown) =>
    new CampaignFileError(`${file}: cannot be read as ${format.toUpperCase()}: ${(err as Error).message.trim()}`, [], { cause: err });
  // Its own small instance: a streamed query holds its connection until the last chunk is taken.
  const { DuckDBInstance } = await duckdbApi();
  const toJs = await jsConverter();
  const { instance, close } = await spillingInstance(
    {
      memory_limit: '256MB',
      // File order is row order: the record number is the row number in every issue.
      preserve_insertion_order: 'true',
    },
    (c) => DuckDBInstance.create(':memory:', c),
  );
  const connection = await instance.connect();
  try {
    let records: unknown[] = [];
    let firstRow = 1;
    let rows = 0;
    let asJson = format !== 'parquet';
    const chunks = async function* () {
      try {
        let sql = readerSql(file, format);
        if (format === 'parquet') {
          const described = await connection.runAndReadAll(`DESCRIBE ${sql}`);
          const types = described.getRowObjectsJS().map((r) => String(r['column_type']));
          // The JSON text path where it gives the values the object path would: not for dates,
          // times, decimals and other types whose JSON form differs from their JS value.
          asJson = types.every((t) => !JSON_UNSAFE_TYPE.test(t));
          if (asJson) sql = `SELECT CAST(to_json(t) AS VARCHAR) AS json FROM (${sql}) t`;
        }
        const result = await connection.stream(sql);
        yield* result.yieldConvertedRowObjects(toJs);
      } catch (err) {
        throw unreadable(err);
      }
    };
    for await (const chunk of chunks()) {
      for (const r of asJson ? chunk.map((c) => parseRecordJson(c['json'])) : chunk) records.push(r);
      rows += chunk.length;
      if (records.length >= chunkRows) {
        yield { file, format, records, firstRow };
        firstRow = rows + 1;
        records = [];
      }
    }
    if (records.length > 0) yield { file, format, records, firstRow };
  } finally {
    connection.closeSync();
    close();
  }
}

/** The problem of a JSONL line that is not JSON (`err`: JSON.parse's), naming the file and the line. */
export function jsonlLineIssue(file: string, line: number, err: unknown): FileIssue {
  return jsonlLineProblem(file, line, jsonSyntaxProblem(err));
}

/** The same from the problem's words (an import thread sends those). */
export function jsonlLineProblem(file: string, line: number, problem: string): FileIssue {
  return { file, path: `line ${line}`, message: `not valid JSON (${problem})` };
}

/**
 * JSONL read in JavaScript, line by line from a stream: one pass, no copy of the file in DuckDB,
 * and each line parsed once. Blank lines are skipped; row numbers count records, as for the other
 * formats. A line that is not JSON is a problem of that line (`line N`), as a bad row is, and
 * reading goes on: every broken line of the file is named.
 */
async function* readJsonlChunks(file: string, chunkRows: number): AsyncGenerator<RawFile> {
  let records: unknown[] = [];
  let issues: FileIssue[] = [];
  let firstRow = 1;
  let rows = 0;
  let line = 0;
  let rest = '';
  const take = (text: string): void => {
    line++;
    if (text.trim() === '') return;
    try {
      records.push(JSON.parse(text) as unknown);
    } catch (err) {
      issues.push(jsonlLineIssue(file, line, err));
      return;
    }
    rows++;
  };
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 });
  try {
    for await (const piece of stream as AsyncIterable<string>) {
      const text = line === 0 && rest === '' && piece.startsWith('\uFEFF') ? piece.slice(1) : piece;
      let start = 0;
      let end = text.indexOf('\n');
      if (end !== -1) {
        take(rest + text.slice(0, end));
        rest = '';
        start = end + 1;
        while ((end = text.indexOf('\n', start)) !== -1) {
          take(text.slice(start, end));
          start = end + 1;
        }
      }
      rest += text.slice(start);
      if (records.length >= chunkRows) {
        yield { file, format: 'jsonl', records, firstRow, issues };
        firstRow = rows + 1;
        records = [];
        issues = [];
      }
    }
  } catch (err) {
    if (err instanceof CampaignFileError) throw err;
    throw new CampaignFileError(`${file}: cannot be read as JSONL: ${(err as Error).message}`, [], { cause: err });
  } finally {
    stream.destroy();
  }
  take(rest);
  if (records.length > 0 || issues.length > 0) yield { file, format: 'jsonl', records, firstRow, issues };
}

function recordsOf(format: ByoFormat, rows: readonly Record<string, unknown>[]): readonly unknown[] {
  if (format === 'parquet') return rows;
  // DuckDB already checked the syntax; a parse failure here would be a DuckDB/JS disagreement.
  return rows.map((r) => {
    const text = r['json'];
    return typeof text === 'string' ? (JSON.parse(text) as unknown) : text;
  });
}

/** Reads every file with one DuckDB instance. */
export async function readReplyFiles(files: readonly string[]): Promise<RawFile[]> {
  const db = await DuckDb.open();
  try {
    const out: RawFile[] = [];
    for (const f of files) out.push(await readReplyFile(db, f));
    return out;
  } finally {
    db.close();
  }
}
