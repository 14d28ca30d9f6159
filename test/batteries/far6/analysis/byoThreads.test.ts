import { open, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importReplies } from '../../../../lib/batteries/far6/byo/index.js';
import { importThreadCount, THREAD_MIN_BYTES } from '../../../../lib/batteries/far6/byo/importThreads.js';
import { jsonlSegments, readSegment } from '../../../../lib/batteries/far6/byo/jsonlSegments.js';
import { packSegment } from '../../../../lib/batteries/far6/byo/packedRows.js';
import { RowPreparer } from '../../../../lib/batteries/far6/byo/rowLines.js';
import { readParquet } from '../../../../lib/store/DuckDb.js';
import { tempDir } from '../../../helpers/campaigns.js';
import { BASE_ROW as BASE } from '../../../fixtures/byo/baseRow.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('byo-threads'));
});
afterEach(() => cleanup());

const MAP = { kind: 'particle', tokens: { yes: 'P', no: 'notP', はい: 'P' } };

/** Rows of every kind the import meets: valid ones, bad ones the thread leaves to the main thread, and conflicts across rows. */
function mixedRows(n: number): unknown[] {
  const rows: unknown[] = Array.from({ length: n }, (_, i) => ({
    ...BASE,
    model: `m${i % 3}`,
    language: i % 2 === 0 ? 'en' : 'ja',
    story: `s${i % 7}`,
    repeat: Math.floor(i / 6),
    text: i % 4 === 0 ? 'No.' : i % 4 === 1 ? 'はい、そうです。' : 'Yes.',
    reading_map: MAP,
    ...(i % 5 === 0 ? { readings: [{ reader: 'judge:j', label: 'P' }] } : {}),
    ...(i % 11 === 0 ? { my_column: i } : {}),
  }));
  rows[13] = { ...(rows[13] as object), language: 'xx' };
  rows[20] = [1, 2];
  rows[27] = { ...(rows[27] as object), story_group: 'control' };
  rows[33] = { ...(rows[2] as object) };
  rows[34] = { ...(rows[2] as object), attempt: 2, text: 'No.' };
  rows[40] = { ...(rows[40] as object), constraint: 'label', reading_map: { ...MAP, letters: [{ letter: 'A', proposition: 'P' }] } };
  rows[41] = { ...(rows[41] as object), constraint: 'label' };
  return rows;
}

const jsonl = (rows: readonly unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

async function importWith(file: string, opts: { threads: number; segmentBytes?: number }) {
  const tablesDir = path.join(dir, '.out', `tables-${Math.random().toString(36).slice(2)}`);
  return { tablesDir, ...(await importReplies(file, { tablesDir, ...opts })) };
}

function table(tablesDir: string, name: 'prompts' | 'replies' | 'readings') {
  return readParquet<Record<string, unknown>>(`${tablesDir}/generate/${name}/**/*.parquet`, 'SELECT * FROM parts ORDER BY ALL');
}

describe('JSONL segments', () => {
  it('cut just after a newline, cover the file, and decode to the whole file text', async () => {
    const file = path.join(dir, 'r.jsonl');
    const text = `\uFEFF${['a', '', 'ééé', 'x'.repeat(300), 'はい', 'last'].join('\r\n')}`;
    await writeFile(file, text);
    const size = (await readFile(file)).length;
    for (const bytes of [1, 2, 5, 64, 10_000]) {
      const fh = await open(file, 'r');
      const segments = [];
      for await (const s of jsonlSegments(fh, size, bytes)) segments.push(s);
      await fh.close();
      expect(segments[0]).toMatchObject({ start: 0, first: true });
      expect(segments.at(-1)?.end).toBe(size);
      for (let i = 1; i < segments.length; i++) expect(segments[i]).toMatchObject({ start: segments[i - 1]?.end, first: false });
      const parts = await Promise.all(segments.map((s) => readSegment(file, s)));
      for (const p of parts.slice(0, -1)) expect(p.at(-1)).toBe(0x0a);
      expect(Buffer.concat(parts).toString('utf8')).toBe(text);
    }
  });

  it('a segment packs its valid rows and sends back, as lines, the records the main thread must check', async () => {
    const text = `\uFEFF${jsonl([BASE, { ...BASE, language: 'xx' }])}\n${JSON.stringify({ ...BASE, repeat: 1 })}\n{"model":\n${JSON.stringify(BASE)}\n`;
    const packed = packSegment('f.jsonl', Buffer.from(text), true, new RowPreparer());
    // A line that is not JSON is sent back as a problem of its line; the lines after it are read on.
    expect(packed).toMatchObject({ lines: 6, records: 4, syntaxErrors: [{ line: 5, text: '{"model":' }] });
    expect([...packed.row]).toEqual([1, 3, 4]);
    expect(packed.declined).toEqual([{ row: 2, text: JSON.stringify({ ...BASE, language: 'xx' }) }]);
    // Only the first segment of a file may start with a byte order mark.
    expect(packSegment('f.jsonl', Buffer.from(`\uFEFF${JSON.stringify(BASE)}\n`), false, new RowPreparer()).syntaxErrors[0]?.line).toBe(1);
  });
});

describe('importReplies in threads', () => {
  it('gives the tables, issues, warnings and summary of the in-process import, whatever the segment size', async () => {
    const file = path.join(dir, 'r.jsonl');
    // A blank line, CRLF line ends and a byte order mark, as the in-process reader takes them.
    await writeFile(file, `\uFEFF${jsonl(mixedRows(60)).replace('\n', '\n\n').replaceAll('}\n{', '}\r\n{')}`);
    const inProcess = await importWith(file, { threads: 0 });
    expect(inProcess.issues.map((i) => i.path)).toEqual(['row 14, field "language"', 'row 21', 'row 28, field "story_group"', 'row 34, field "attempt"', 'row 41, field "reading_map.letters"']);
    expect(inProcess.warnings).toHaveLength(2);
    for (const segmentBytes of [100, 1_000, 1 << 20]) {
      const threaded = await importWith(file, { threads: 2, segmentBytes });
      expect(threaded.issues, `segments of ${segmentBytes} bytes`).toEqual(inProcess.issues);
      expect(threaded.warnings).toEqual(inProcess.warnings);
      expect(threaded.summary).toEqual(inProcess.summary);
      expect(threaded.partitions).toEqual(inProcess.partitions);
      for (const name of ['prompts', 'replies', 'readings'] as const) {
        expect(await table(threaded.tablesDir, name), name).toEqual(await table(inProcess.tablesDir, name));
      }
    }
  });

  it('a line that is not JSON in a later segment is the problem of its line, as in process, and the rows after it are read', async () => {
    const file = path.join(dir, 'r.jsonl');
    const rows = mixedRows(30).map((r) => JSON.stringify(r));
    rows.splice(24, 0, '{"model": ');
    await writeFile(file, `${rows.join('\n')}\n`);
    const inProcess = await importWith(file, { threads: 0 });
    expect(inProcess.issues).toContainEqual({ file, path: 'line 25', message: 'not valid JSON (the JSON ends too early)' });
    const threaded = await importWith(file, { threads: 2, segmentBytes: 500 });
    expect(threaded.issues).toEqual(inProcess.issues);
    expect(threaded.summary).toEqual(inProcess.summary);
  });

  it('a reading map the token rule cannot read fails the import as in process', async () => {
    const file = path.join(dir, 'r.jsonl');
    const rows = mixedRows(30);
    rows[22] = { ...BASE, story: 'other', reading_map: { kind: 'particle', tokens: {} } };
    await writeFile(file, jsonl(rows));
    const inProcess = await importWith(file, { threads: 0 }).catch((err: unknown) => err);
    const threaded = await importWith(file, { threads: 2, segmentBytes: 500 }).catch((err: unknown) => err);
    expect((inProcess as Error).message).toMatch(/has no tokens/);
    expect(threaded).toBeInstanceOf((inProcess as Error).constructor);
    expect((threaded as Error).message).toBe((inProcess as Error).message);
  });

  it('threads only for large JSONL files, unless asked', () => {
    expect(importThreadCount(THREAD_MIN_BYTES - 1)).toBe(0);
    expect(importThreadCount(THREAD_MIN_BYTES)).toBeGreaterThanOrEqual(2);
    expect(importThreadCount(10, 3)).toBe(3);
    expect(importThreadCount(THREAD_MIN_BYTES, 0)).toBe(0);
  });
});
