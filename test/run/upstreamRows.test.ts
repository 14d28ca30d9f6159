import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { duckdbParquetIo } from '../../lib/run/parquetIoDuckDb.js';
import { jsParquetIo } from '../../lib/run/parquetIoJs.js';
import type { UpstreamNeeds } from '../../lib/run/upstreamNeeds.js';
import { partRange } from '../../lib/run/upstreamSlice.js';
import type { UpstreamFilter } from '../../lib/run/upstreamSlice.js';
import { JsParquetWriter } from '../../lib/store/JsParquet.js';
import { LocalBlobStore, ParquetWriter } from '../../lib/store/index.js';
import type { ReadingRow, ReplyRow } from '../../lib/store/index.js';

// The Lambda worker reads the upstream of a dependent phase and restores orphan
// parts in JavaScript (lib/run/parquetIoJs.ts); the local run and the GPU job with DuckDB. Both
// read the same parts, DuckDB-written (zstd) or JavaScript-written (gzip), to the same result.

const root = mkdtempSync(path.join(os.tmpdir(), 'sondage-upstream-rows-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const P = { campaign: 'up', model: 'm', language: 'fr' } as const;

function reply(item: string, attempt: number, status: 'ok' | 'error', at: number, text: string | null, phase = 'generate'): ReplyRow {
  return {
    ...P,
    item_id: item,
    phase,
    attempt,
    status,
    text,
    finish_reason: status === 'ok' ? 'stop' : null,
    input_tokens: 10,
    output_tokens: 5,
    cached_input_tokens: null,
    cost_usd: 0.001,
    latency_ms: 12.5,
    logprobs_json: item.endsWith('3') ? JSON.stringify({ Yes: { logprob: -0.25, exact: true } }) : null,
    logprobs_exact: null,
    error_class: status === 'error' ? 'server' : null,
    error_message: status === 'error' ? 'HTTP 500' : null,
    settings_json: '{}',
    provider: 'simulated',
    simulated: true,
    created_at: new Date(Date.UTC(2026, 11, 1, 0, 0, at)).toISOString(),
  };
}

function reading(item: string, reader: string, label: string, judge: string | null, facet: string | null = null, value: number | null = null): ReadingRow {
  return { ...P, item_id: item, phase: 'judge', reader, label, raw: `raw ${label}`, judge_item_id: judge, facet, value };
}

const replies: ReplyRow[] = [
  reply('i1', 1, 'error', 1, null),
  reply('i1', 2, 'ok', 3, 'second'),
  reply('i1', 3, 'ok', 2, 'third'),
  reply('i2', 1, 'ok', 9, 'late'),
  reply('i2', 1, 'ok', 4, 'early tie'),
  reply('i3', 1, 'ok', 1, 'with logprobs'),
  reply('i4', 1, 'error', 1, null),
];
const moreReplies: ReplyRow[] = [reply('i5', 2, 'ok', 1, 'in a second part'), reply('i1', 1, 'ok', 5, 'first attempt, another part')];
const readings: ReadingRow[] = [
  reading('i1', 'judge:a', 'no', 'j2'),
  reading('i1', 'judge:a', 'yes', 'j1'),
  reading('i1', 'judge:a', 'maybe', null),
  reading('i1', 'rule', 'yes', null),
  reading('i1', 'rule', 'aa', null),
  reading('i2', 'judge_b', 'x', 'j3', 'scope', 0.25),
  reading('i2', 'judgeXb', 'y', 'j4', 'scope', 1),
  reading('i2', 'judge_b', 'z', 'j5', 'nature', null),
  reading('i3', 'parse', 'ok', null, null, -2.5),
];

const needs: UpstreamNeeds = {
  replies: new Set(['generate', 'missing']),
  readings: new Map<string, readonly string[] | undefined>([
    ['judge', undefined],
    ['nowhere', undefined],
  ]),
};
const filtered: UpstreamNeeds = { replies: new Set(), readings: new Map([['judge', ['rule', 'judge_*']]]) };

async function writeParts(dir: string, engine: 'duckdb' | 'js'): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const store = new LocalBlobStore(dir);
  const writer = engine === 'duckdb' ? await ParquetWriter.create({ threads: 1 }) : new JsParquetWriter();
  try {
    await writer.writePart(store, { ...P, phase: 'generate', table: 'replies', partName: 'part-a.parquet' }, replies);
    await writer.writePart(store, { ...P, phase: 'generate', table: 'replies', partName: 'part-b.parquet' }, moreReplies);
    await writer.writePart(store, { ...P, phase: 'judge', table: 'readings', partName: 'part-a.parquet' }, readings);
  } finally {
    await writer.close();
  }
}

/** Everything an Upstream says about the items, readings in a fixed order. */
async function snapshot(io: typeof jsParquetIo, dir: string, n: UpstreamNeeds, only?: UpstreamFilter) {
  const session = await io.session(path.join(dir, 'tmp'));
  try {
    const up = await session.upstream(dir, P.campaign, n, P.model, P.language, only);
    const items = ['i1', 'i2', 'i3', 'i4', 'i5', 'i6'];
    return {
      replies: items.map((i) => [i, up.reply('generate', i) ?? null, up.reply('missing', i) ?? null]),
      readings: items.map((i) => [i, [...up.readings('judge', i)].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))), up.readings('nowhere', i)]),
    };
  } finally {
    await session.close();
  }
}

describe('the upstream read in JavaScript is the upstream DuckDB reads', () => {
  for (const engine of ['duckdb', 'js'] as const) {
    it(`over parts written by ${engine === 'duckdb' ? 'DuckDB (zstd)' : 'the JavaScript writer (gzip)'}`, async () => {
      const dir = path.join(root, engine);
      await writeParts(dir, engine);
      const viaDuck = await snapshot(duckdbParquetIo, dir, needs);
      const viaJs = await snapshot(jsParquetIo, dir, needs);
      expect(viaJs).toEqual(viaDuck);
      // The rules themselves: lowest ok attempt, ties by created_at; one reading per reader and facet.
      expect(viaJs.replies[0]![1]).toMatchObject({ text: 'first attempt, another part', attempt: 1 });
      expect(viaJs.replies[1]![1]).toMatchObject({ text: 'early tie' });
      expect(viaJs.replies[2]![1]).toMatchObject({ logprobs: { Yes: { logprob: -0.25, exact: true } } });
      expect(viaJs.replies[3]![1]).toBeNull();
      expect((viaJs.readings[0]![1] as { reader: string; label: string }[]).map((r) => `${r.reader}=${r.label}`)).toEqual(['judge:a=yes', 'rule=aa']);
      // readers: a name, or a prefix whose `_` matches any one character (SQL LIKE)
      expect(await snapshot(jsParquetIo, dir, filtered)).toEqual(await snapshot(duckdbParquetIo, dir, filtered));
    });
  }

  it('turns a stored reply part back into the same journal lines', async () => {
    const dir = path.join(root, 'journal');
    await writeParts(dir, 'duckdb');
    // Staged flat, as restoreOrphanParts stages it (no model=/language= folders for DuckDB to add as columns).
    const part = path.join(dir, 'part-a.parquet');
    copyFileSync(path.join(dir, 'campaigns/up/generate/replies/model=m/language=fr/part-a.parquet'), part);
    const lines: Record<string, unknown>[][] = [];
    for (const io of [duckdbParquetIo, jsParquetIo]) {
      const session = await io.session(path.join(dir, 'tmp'));
      const journal = path.join(dir, `${lines.length}.ndjson`);
      await session.partToJournal(part, journal, { model: P.model, language: P.language });
      await session.close();
      lines.push(readFileSync(journal, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));
    }
    expect(lines[1]).toEqual(lines[0]);
    expect(lines[1]).toEqual(replies.map((r) => ({ ...r })));
  });

  it("keeps only a slice's items of the filter's phase, as the whole read has them (a dependent shard's read)", async () => {
    const dir = path.join(root, 'slice');
    await writeParts(dir, 'js');
    const whole = await snapshot(duckdbParquetIo, dir, needs);
    for (const only of [{ phase: 'generate', ids: new Set(['i1', 'i3']) }, { phase: 'judge', ids: new Set(['i2']) }]) {
      const expected = {
        replies: whole.replies.map(([i, g, m]) => [i, only.phase === 'generate' && !only.ids.has(i as string) ? null : g, m]),
        readings: whole.readings.map(([i, j, n]) => [i, only.phase === 'judge' && !only.ids.has(i as string) ? [] : j, n]),
      };
      expect(await snapshot(jsParquetIo, dir, needs, only)).toEqual(expected);
      expect(await snapshot(duckdbParquetIo, dir, needs, only)).toEqual(expected);
    }
  });

  it("reads a part's writer shard from its name", () => {
    expect(partRange('campaigns/c/generate/replies/model=m/language=en/part-e1-i-generate-0-2000-generate-00000.parquet')).toEqual({ writer: 'generate', start: 0, end: 2000 });
    expect(partRange('x/part-exec-1-req-audit-second-0-81-audit-second-00003.parquet')).toEqual({ writer: 'audit-second', start: 0, end: 81 });
    // Before names carried the end, and a provider batch's part: no range, read whole.
    expect(partRange('x/part-exec-1-req-generate-0-generate-00000.parquet')).toBeUndefined();
    expect(partRange('x/part-batch-abc.parquet')).toBeUndefined();
  });
});
