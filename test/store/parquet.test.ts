import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SondageError } from '../../lib/errors.js';
import { FAR6_PROMPT_COLUMNS } from '../../lib/batteries/far6/promptColumns.js';
import type { Far6Item } from '../../lib/batteries/far6/types.js';
import {
  DuckDb,
  LocalBlobStore,
  ParquetWriter,
  promptColumns,
  promptRow,
  readParquet,
  readParquetSql,
  sqlString,
  TABLE_SCHEMAS,
  tableGlob,
} from '../../lib/store/index.js';
import type { BlobStore, ReadingRow, ReplyRow } from '../../lib/store/index.js';
import { checkStoredParts } from '../../lib/store/storedParts.js';
import { sharedColumns } from '../../lib/store/duckdbAppend.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'sondage-parquet-'));
const store = new LocalBlobStore(root);
let writer: ParquetWriter;

beforeAll(async () => {
  writer = await ParquetWriter.create({ threads: 1 });
});
afterAll(async () => {
  await writer.close();
  rmSync(root, { recursive: true, force: true });
});

const item: Far6Item = {
  item_id: 'i-0001',
  prompt_key: 'pk-01',
  campaign: 'rt',
  phase: 'generate',
  battery: 'far6',
  model: 'alpha',
  language: 'de',
  factors: {
    story: 'finn',
    story_group: 'contested',
    concept_pair: 'wrong_right',
    form: 'negint',
    constraint: 'yesno',
    named: 'P',
    option_order: 1,
    repeat: 2,
    construction: 'evaluative_adjective',
  },
  messages: [
    { role: 'system', content: 'Antworte mit einem Satz.' },
    { role: 'user', content: 'War es nicht falsch, was Finn getan hat?\nAntworte mit „ja“, „nein“ oder „doch“.' },
  ],
  settings: { temperature: 1, max_tokens: 64 },
  extras: {
    reading_map: {
      kind: 'particle',
      tokens: { ja: 'P', doch: 'P', nein: 'notP' },
      particles: { yes: 'ja', no: 'nein', reverse: 'doch', order: ['nein', 'ja', 'doch'] },
    },
    propositions: { P: 'Was Finn getan hat, war falsch.', notP: 'Was Finn getan hat, war richtig.' },
  },
};

/**
 * A store without local paths, in memory: what a part bound for S3 goes through. `beforePut` runs
 * before each object is kept (a slow upload).
 */
function memoryStore(beforePut?: () => Promise<void>): { readonly store: BlobStore; readonly saved: Map<string, Uint8Array> } {
  const saved = new Map<string, Uint8Array>();
  const store: BlobStore = {
    put: async (k, body) => {
      await beforePut?.();
      saved.set(k, typeof body === 'string' ? new TextEncoder().encode(body) : body);
    },
    get: async (k) => saved.get(k),
    exists: async (k) => saved.has(k),
    list: async (p) => [...saved.keys()].filter((k) => k.startsWith(p)).sort(),
    delete: async (k) => void saved.delete(k),
  };
  return { store, saved };
}

function reply(i: number, over: Partial<ReplyRow> = {}): ReplyRow {
  return {
    item_id: `i-${i}`,
    campaign: 'rt',
    phase: 'generate',
    model: '7',
    language: 'zh',
    attempt: 1,
    status: 'ok',
    text: i % 2 === 0 ? '不是，他没有做错。😀 "quoted" \\ back\nslash' : null,
    finish_reason: i % 2 === 0 ? 'stop' : null,
    input_tokens: 100 + i,
    output_tokens: 10,
    cached_input_tokens: i % 2 === 0 ? 40 + i : null,
    cost_usd: 0.000125 * i,
    latency_ms: 12.5,
    logprobs_json: i === 0 ? '{"不":{"logprob":-0.1,"exact":true}}' : null,
    logprobs_exact: i === 0 ? true : null,
    error_class: i % 2 === 0 ? null : 'rate_limit',
    error_message: i % 2 === 0 ? null : 'HTTP 429',
    settings_json: '{"temperature":0}',
    provider: 'simulated/alpha',
    simulated: i % 3 === 0,
    created_at: '2026-01-02T03:04:05.678Z',
    ...over,
  };
}

/** Columns stored inside one part file, read without hive partitioning. */
async function fileColumns(file: string): Promise<string[]> {
  const rows = await readParquet<{ column_name: string }>(
    file,
    `DESCRIBE SELECT * FROM read_parquet(${sqlString(file)}, hive_partitioning = false)`,
  );
  return rows.map((r) => r.column_name);
}

describe('ParquetWriter round trip', () => {
  it('prompts: a Far6Item flattened, model and language from the path', async () => {
    const row = promptRow(item, FAR6_PROMPT_COLUMNS);
    const part = await writer.writePart(
      store,
      { campaign: 'rt', phase: 'generate', table: 'prompts', model: 'alpha', language: 'de', partName: 'part-0001.parquet' },
      [row],
      { columns: promptColumns(FAR6_PROMPT_COLUMNS) },
    );
    expect(part).toMatchObject({ key: 'campaigns/rt/generate/prompts/model=alpha/language=de/part-0001.parquet', rows: 1 });

    const back = await readParquet(tableGlob(root, 'rt', 'generate', 'prompts'));
    expect(back).toEqual([{ ...row }]);
    expect(JSON.parse(back[0]?.['messages_json'] as string)).toEqual(item.messages);
    expect(JSON.parse(back[0]?.['reading_map_json'] as string)).toEqual(item.extras.reading_map);
    expect(back[0]).toMatchObject({ option_order: 1, repeat: 2, source_item_id: null, prop_p: item.extras.propositions.P });

    const cols = await fileColumns(store.localPath(part.key));
    expect(cols).toEqual(promptColumns(FAR6_PROMPT_COLUMNS).map((c) => c.name));
    expect(cols).not.toContain('model');
    expect(cols).not.toContain('language');
  });

  it('replies: every field, nulls and unicode intact; a numeric model id stays a string', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => reply(i));
    const target = { campaign: 'rt', phase: 'generate', table: 'replies', model: '7', language: 'zh', partName: 'part-a.parquet' } as const;
    await writer.writePart(store, target, rows);
    await writer.writePart(store, { ...target, partName: 'part-b.parquet' }, [reply(5)]);

    const back = await readParquet(tableGlob(root, 'rt', 'generate', 'replies'), 'SELECT * FROM parts ORDER BY item_id');
    expect(back).toEqual([...rows, reply(5)].map((r) => ({ ...r })));
    expect(await fileColumns(store.localPath(`campaigns/rt/generate/replies/model=7/language=zh/part-a.parquet`))).toEqual(
      TABLE_SCHEMAS.replies.map((c) => c.name),
    );

    const [agg] = await readParquet<{ n: number; tokens: number; model: string }>(
      tableGlob(root, 'rt', 'generate', 'replies'),
      'SELECT count(*) AS n, sum(input_tokens) AS tokens, any_value(model) AS model FROM parts',
    );
    // BIGINT and HUGEINT come back as plain numbers.
    expect(agg).toEqual({ n: 6, tokens: 615, model: '7' });
  });

  it('readings: every field; several partitions read as one table', async () => {
    const reading = (id: string, model: string, language: 'en' | 'fr', label: ReadingRow['label']): ReadingRow => ({
      item_id: id,
      campaign: 'rt',
      phase: 'read',
      model,
      language,
      reader: 'judge:gpt-x',
      label,
      raw: label === 'invalid' ? null : `{"label":"${label}"}`,
      judge_item_id: label === 'invalid' ? null : `j-${id}`,
      facet: label === 'P' ? 'nature' : null,
      value: label === 'notP' ? 0.25 : null,
      read_with: label === 'invalid' ? null : `fp-${id}`,
    });
    const a = [reading('i-1', 'alpha', 'en', 'P'), reading('i-2', 'alpha', 'en', 'invalid')];
    const b = [reading('i-3', 'beta', 'fr', 'notP')];
    await writer.writePart(store, { campaign: 'rt', phase: 'read', table: 'readings', model: 'alpha', language: 'en', partName: 'part-1.parquet' }, a);
    await writer.writePart(store, { campaign: 'rt', phase: 'read', table: 'readings', model: 'beta', language: 'fr', partName: 'part-1.parquet' }, b);

    const back = await readParquet(tableGlob(root, 'rt', 'read', 'readings'), 'SELECT * FROM parts ORDER BY item_id');
    expect(back).toEqual([...a, ...b].map((r) => ({ ...r })));
  });

  it('reads a missing nullable field as NULL and ignores fields outside the schema', async () => {
    const row = { item_id: 'x', campaign: 'nl', phase: 'read', model: 'm', language: 'en', reader: 'rule', label: 'none', extra: 1 };
    await writer.writePart(
      store,
      { campaign: 'nl', phase: 'read', table: 'readings', model: 'm', language: 'en', partName: 'part-1.parquet' },
      [row as unknown as ReadingRow],
    );
    const [back] = await readParquet(tableGlob(root, 'nl', 'read', 'readings'));
    expect(back).toEqual({ item_id: 'x', campaign: 'nl', phase: 'read', model: 'm', language: 'en', reader: 'rule', label: 'none', raw: null, judge_item_id: null, facet: null, value: null, read_with: null });
  });

  it('takes rows from an async iterable and writes an empty part', async () => {
    async function* gen(): AsyncGenerator<ReplyRow> {
      for (let i = 0; i < 3000; i++) yield reply(i, { campaign: 'it', model: 'm', language: 'en' });
    }
    const target = { campaign: 'it', phase: 'generate', table: 'replies', model: 'm', language: 'en' } as const;
    expect((await writer.writePart(store, { ...target, partName: 'part-1.parquet' }, gen())).rows).toBe(3000);
    expect((await writer.writePart(store, { ...target, partName: 'part-2.parquet' }, [])).rows).toBe(0);
    const [row] = await readParquet<{ n: number; s: number }>(
      tableGlob(root, 'it', 'generate', 'replies'),
      'SELECT count(*) AS n, count(DISTINCT item_id) AS s FROM parts',
    );
    expect(row).toEqual({ n: 3000, s: 3000 });
  });

  it('puts the part through a store without a local path', async () => {
    const { store: remote, saved } = memoryStore();
    const target = { campaign: 'rm', phase: 'generate', table: 'replies', model: 'm', language: 'en', partName: 'part-1.parquet' } as const;
    const part = await writer.writePart(remote, target, [reply(2, { campaign: 'rm', model: 'm', language: 'en' })]);

    const body = saved.get(part.key);
    expect(body?.byteLength).toBe(part.bytes);
    expect(new TextDecoder().decode(body?.subarray(0, 4))).toBe('PAR1');
    await store.put(part.key, body ?? new Uint8Array());
    const [row] = await readParquet(tableGlob(root, 'rm', 'generate', 'replies'));
    expect(row).toEqual({ ...reply(2, { campaign: 'rm', model: 'm', language: 'en' }) });
  });
});

describe('ParquetWriter refuses bad rows', () => {
  const target = { campaign: 'bad', phase: 'generate', table: 'replies', model: 'm', language: 'en', partName: 'part-1.parquet' } as const;
  const ok = (over: Record<string, unknown>): ReplyRow => ({ ...reply(1, { campaign: 'bad', model: 'm', language: 'en' }), ...over }) as ReplyRow;

  it.each([
    [{ attempt: '1' }, /replies row 1 \(item_id "i-1"\): column attempt expects INTEGER, got "1" \(string\)/],
    [{ attempt: 1.5 }, /column attempt expects INTEGER, got 1.5/],
    [{ cost_usd: Number.NaN }, /column cost_usd expects a finite number/],
    [{ item_id: null }, /column item_id expects VARCHAR, got null \(null\); the column is not nullable/],
    [{ simulated: 'yes' }, /column simulated expects BOOLEAN/],
    [{ model: 'other' }, /model is "other" \(string\) but the part file is for model "m"/],
    [{ language: 'fr' }, /language is "fr" \(string\) but the part file is for language "en"/],
    [{ phase: 'judge' }, /phase is "judge"/],
  ])('%j', async (over, message) => {
    const rows = [ok({}), ok(over)];
    await expect(writer.writePart(store, target, rows)).rejects.toThrow(SondageError);
    await expect(writer.writePart(store, target, rows)).rejects.toThrow(message);
    expect(await store.exists('campaigns/bad/generate/replies/model=m/language=en/part-1.parquet')).toBe(false);
    expect(await store.list('campaigns/bad/')).toEqual([]);
  });
});

describe('ParquetWriter with trusted rows (the run\'s own: no per-cell checks before the appender)', () => {
  const target = { campaign: 'tr', phase: 'generate', table: 'replies', model: 'm', language: 'en' } as const;
  const row = (over: Record<string, unknown>): ReplyRow => ({ ...reply(2, { campaign: 'tr', model: 'm', language: 'en' }), ...over }) as ReplyRow;

  it('writes NaN and ±Infinity as NULL, as the JSON lines it used to stage did', async () => {
    const rows = [row({ item_id: 'a', cost_usd: Number.NaN }), row({ item_id: 'b', latency_ms: Number.POSITIVE_INFINITY }), row({ item_id: 'c', latency_ms: -Infinity })];
    await writer.writePart(store, { ...target, partName: 'part-nan.parquet' }, rows, { trusted: true });
    const back = await readParquet<{ item_id: string; cost_usd: number | null; latency_ms: number | null }>(
      tableGlob(root, 'tr', 'generate', 'replies'),
      'SELECT item_id, cost_usd, latency_ms FROM parts ORDER BY item_id',
    );
    expect(back).toEqual([
      { item_id: 'a', cost_usd: null, latency_ms: 12.5 },
      { item_id: 'b', cost_usd: 0.00025, latency_ms: null },
      { item_id: 'c', cost_usd: 0.00025, latency_ms: null },
    ]);
  });

  it.each([
    [{ attempt: '1' }, /^replies row 1 \(item_id "i-2"\): column attempt expects INTEGER, got "1" \(string\)$/],
    [{ attempt: 2 ** 31 }, /column attempt expects INTEGER, got 2147483648/],
    [{ text: 5 }, /column text expects VARCHAR, got 5 \(number\)/],
    [{ simulated: 1 }, /column simulated expects BOOLEAN, got 1 \(number\)/],
  ])('a cell of the wrong type %j is named, and no part is written', async (over, message) => {
    const part = { ...target, campaign: 'trbad', partName: 'part-1.parquet' };
    const rows = [row({ campaign: 'trbad' }), row({ campaign: 'trbad', ...over })];
    await expect(writer.writePart(store, part, rows, { trusted: true })).rejects.toThrow(message);
    expect(await store.list('campaigns/trbad/')).toEqual([]);
    // The writer goes on: its next part is whole.
    expect((await writer.writePart(store, part, [row({ campaign: 'trbad' })], { trusted: true })).rows).toBe(1);
    await store.delete('campaigns/trbad/generate/replies/model=m/language=en/part-1.parquet');
  });
});

describe('ParquetWriter: cells every row shares are selected as literals, not appended per row', () => {
  const target = { campaign: 'k', phase: 'generate', table: 'replies', model: 'm', language: 'en' } as const;
  const row = (i: number, over: Record<string, unknown> = {}): ReplyRow => ({ ...reply(0, { campaign: 'k', model: 'm', language: 'en' }), item_id: `k-${i}`, ...over }) as ReplyRow;

  it('names the shared columns, of every type, and leaves out a value its column would refuse', () => {
    const rows = [row(1), row(2)];
    const constant = sharedColumns(rows, TABLE_SCHEMAS.replies);
    expect([...constant.keys()].sort()).toEqual(
      TABLE_SCHEMAS.replies.map((c) => c.name).filter((n) => !['item_id'].includes(n)).sort(),
    );
    expect(constant.get('campaign')).toBe("CAST('k' AS VARCHAR)");
    expect(constant.get('error_class')).toBe('CAST(NULL AS VARCHAR)');
    expect(constant.get('attempt')).toBe('CAST(1 AS INTEGER)');
    expect(constant.get('simulated')).toBe('CAST(true AS BOOLEAN)');
    expect(constant.get('latency_ms')).toBe("CAST('12.5' AS DOUBLE)");
    const bad = sharedColumns([row(1, { attempt: '1', text: 'a\u0000b', cost_usd: -0 }), row(2, { attempt: '1', text: 'a\u0000b', cost_usd: -0 })], TABLE_SCHEMAS.replies);
    expect(bad.has('attempt')).toBe(false);
    expect(bad.has('text')).toBe(false);
    expect(bad.has('cost_usd')).toBe(false);
    // One row, or rows alike in every cell: a column is still staged.
    expect(sharedColumns([row(1)], TABLE_SCHEMAS.replies).size).toBe(0);
    expect(sharedColumns([row(1), row(1)], TABLE_SCHEMAS.replies).has('item_id')).toBe(false);
  });

  it('reads back what was written, with the schema\'s column types, whatever the cells hold', async () => {
    const shared = {
      text: "l'été \"quoted\" 😀 \\ back\nslash",
      finish_reason: null,
      cost_usd: 0.1 + 0.2,
      latency_ms: Number.POSITIVE_INFINITY,
      cached_input_tokens: null,
      logprobs_exact: false,
      settings_json: "{'a':''}",
    };
    const rows = [row(1, shared), row(2, shared), row(3, shared)];
    // Trusted, as the run's own rows are: an untrusted row may not hold Infinity.
    const part = await writer.writePart(store, { ...target, partName: 'part-const.parquet' }, rows, { trusted: true });
    const back = await readParquet(tableGlob(root, 'k', 'generate', 'replies'), 'SELECT * FROM parts ORDER BY item_id');
    expect(back).toEqual(rows.map((r) => ({ ...r, latency_ms: null })));
    const file = store.localPath(part.key);
    const types = await readParquet<{ column_name: string; column_type: string }>(file, `DESCRIBE SELECT * FROM read_parquet(${sqlString(file)}, hive_partitioning = false)`);
    expect(types.map((t) => `${t.column_name} ${t.column_type}`)).toEqual(TABLE_SCHEMAS.replies.map((c) => `${c.name} ${c.type}`));
  });

  it('refuses a shared cell of the wrong type as it refuses any, naming the first row and the column', async () => {
    const rows = [row(1, { attempt: '1' }), row(2, { attempt: '1' })];
    const part = { ...target, campaign: 'kbad', partName: 'part-1.parquet' };
    const named = rows.map((r) => ({ ...r, campaign: 'kbad' }));
    await expect(writer.writePart(store, part, named, { trusted: true })).rejects.toThrow(/^replies row 0 \(item_id "k-1"\): column attempt expects INTEGER, got "1" \(string\)$/);
    expect(await store.list('campaigns/kbad/')).toEqual([]);
  });
});

describe('reading with no files yet', () => {
  it('readParquet returns [] for an empty glob', async () => {
    expect(await readParquet(tableGlob(root, 'nothing', 'generate', 'replies'))).toEqual([]);
    expect(await readParquet(`${root}/no/such/dir/*.parquet`, 'SELECT count(*) AS n FROM parts')).toEqual([]);
  });

  it('DuckDb.attachTable gives an empty view with the table columns, so joins still run', async () => {
    // Its own campaign's replies: the test must not depend on which test of the file ran before it.
    await writer.writePart(store, { campaign: 'attach', phase: 'generate', table: 'replies', model: '7', language: 'zh', partName: 'part-a.parquet' }, Array.from({ length: 6 }, (_, i) => reply(i, { campaign: 'attach' })));
    const db = await DuckDb.open({ threads: 1 });
    try {
      expect(await db.attachTable('replies', tableGlob(root, 'attach', 'generate', 'replies'), 'replies')).toBe(true);
      expect(await db.attachTable('readings', tableGlob(root, 'attach', 'nothing', 'readings'), 'readings')).toBe(false);
      const joined = await db.all(
        'SELECT r.item_id, g.label FROM replies r JOIN readings g USING (item_id, model, language)',
      );
      expect(joined).toEqual([]);
      const cols = await db.all<{ column_name: string; column_type: string }>('DESCRIBE readings');
      expect(cols.map((c) => c.column_name)).toEqual([...TABLE_SCHEMAS.readings.map((c) => c.name), 'model', 'language']);
      expect(await db.all('SELECT model, count(*) AS n FROM replies GROUP BY model')).toEqual([{ model: '7', n: 6 }]);
      // DECIMAL comes back as a number.
      expect(await db.all('SELECT 1.25::DECIMAL(10, 2) AS d')).toEqual([{ d: 1.25 }]);
    } finally {
      db.close();
    }
  });

  it('DuckDb.attachTable reads a column its parts predate as NULL (readings written before facet and value)', async () => {
    // prepare: a readings part as an earlier version wrote it, without facet and value
    const dir = path.join(root, 'old-readings', 'campaigns', 'old', 'generate', 'readings', 'model=a', 'language=en');
    const db = await DuckDb.open({ threads: 1 });
    try {
      mkdirSync(dir, { recursive: true });
      await db.run(`COPY (SELECT 'i1' AS item_id, 'old' AS campaign, 'generate' AS phase, 'rule' AS reader, 'P' AS label, NULL::VARCHAR AS raw, NULL::VARCHAR AS judge_item_id) TO '${path.join(dir, 'part-0.parquet')}' (FORMAT parquet)`);
      // act
      await db.attachTable('readings', tableGlob(path.join(root, 'old-readings'), 'old', 'generate', 'readings'), 'readings');
      // assess
      expect(await db.all('SELECT item_id, label, facet, value, model FROM readings')).toEqual([{ item_id: 'i1', label: 'P', facet: null, value: null, model: 'a' }]);
    } finally {
      db.close();
    }
  });

  it('checkStoredParts gives the columns the parts hold together: a column only newer parts have is among them', async () => {
    // prepare: one readings part without facet and value (an earlier version's), one with them
    const base = path.join(root, 'mixed-readings');
    const dir = path.join(base, 'campaigns', 'mixed', 'generate', 'readings', 'model=a', 'language=en');
    const db = await DuckDb.open({ threads: 1 });
    try {
      mkdirSync(dir, { recursive: true });
      const old = "'i1' AS item_id, 'mixed' AS campaign, 'generate' AS phase, 'rule' AS reader, 'P' AS label, NULL::VARCHAR AS raw, NULL::VARCHAR AS judge_item_id";
      await db.run(`COPY (SELECT ${old}) TO '${path.join(dir, 'part-0.parquet')}' (FORMAT parquet)`);
      const glob = tableGlob(base, 'mixed', 'generate', 'readings');
      // act, assess: the older part alone lacks them; beside a newer part the union holds them
      expect([...(await checkStoredParts(db, glob, 'readings', TABLE_SCHEMAS.readings))].sort()).toEqual(['campaign', 'item_id', 'judge_item_id', 'label', 'phase', 'raw', 'reader']);
      await db.run(`COPY (SELECT ${old}, NULL::VARCHAR AS facet, 0.5::DOUBLE AS value) TO '${path.join(dir, 'part-1.parquet')}' (FORMAT parquet)`);
      const held = await checkStoredParts(db, glob, 'readings', TABLE_SCHEMAS.readings);
      expect([...held].sort()).toEqual(['campaign', 'facet', 'item_id', 'judge_item_id', 'label', 'phase', 'raw', 'reader', 'value']);
    } finally {
      db.close();
    }
  });

  it('readParquetSql keeps partition values as text', () => {
    expect(readParquetSql("/d/it's/*.parquet")).toBe(
      "read_parquet('/d/it''s/*.parquet', hive_partitioning = true, hive_types_autocast = false, union_by_name = true)",
    );
  });
});

describe('ParquetWriter.close with writes still running', () => {
  /** A promise and the function that settles it. */
  function gate(): { readonly opened: Promise<void>; open(): void } {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { opened, open };
  }
  /** Whether `p` settles within a few event-loop turns and timers. */
  async function settlesSoon(p: Promise<unknown>): Promise<boolean> {
    let settled = false;
    void p.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    return settled;
  }

  it('waits for a part still taking its rows, which is then whole; a write asked after the close is refused', async () => {
    const own = await ParquetWriter.create({ threads: 1 });
    const rowsMayEnd = gate();
    async function* rows(): AsyncGenerator<ReplyRow> {
      for (let i = 0; i < 500; i++) yield reply(i, { campaign: 'cl', model: 'm', language: 'en' });
      await rowsMayEnd.opened;
      for (let i = 500; i < 1000; i++) yield reply(i, { campaign: 'cl', model: 'm', language: 'en' });
    }
    const target = { campaign: 'cl', phase: 'generate', table: 'replies', model: 'm', language: 'en', partName: 'part-1.parquet' } as const;
    const written = own.writePart(store, target, rows());
    await new Promise((resolve) => setTimeout(resolve, 50));

    const closed = own.close();
    expect(await settlesSoon(closed)).toBe(false);
    await expect(own.writePart(store, { ...target, partName: 'part-2.parquet' }, [])).rejects.toThrow('ParquetWriter is closed');
    rowsMayEnd.open();

    expect((await written).rows).toBe(1000);
    await closed;
    const [row] = await readParquet<{ n: number }>(tableGlob(root, 'cl', 'generate', 'replies'), 'SELECT count(*) AS n FROM parts');
    expect(row).toEqual({ n: 1000 });
  });

  it('waits for a part bound for a store until the store has it', async () => {
    const own = await ParquetWriter.create({ threads: 1 });
    const putCalled = gate();
    const putMayEnd = gate();
    const { store: remote, saved } = memoryStore(async () => {
      putCalled.open();
      await putMayEnd.opened;
    });
    const target = { campaign: 'cs', phase: 'generate', table: 'replies', model: 'm', language: 'en', partName: 'part-1.parquet' } as const;
    const written = own.writePart(remote, target, [reply(1, { campaign: 'cs', model: 'm', language: 'en' })]);
    await putCalled.opened;
    const closed = own.close();
    expect(await settlesSoon(closed)).toBe(false);
    putMayEnd.open();

    const part = await written;
    await closed;
    const put = saved.get(part.key);
    expect(put?.byteLength).toBe(part.bytes);
    expect(new TextDecoder().decode(put?.subarray(0, 4))).toBe('PAR1');
  });
});
