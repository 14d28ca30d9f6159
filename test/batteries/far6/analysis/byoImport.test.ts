import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importReplies, readReplyChunks, validateFile } from '../../../../lib/batteries/far6/byo/index.js';
import { DuckDb, readParquet } from '../../../../lib/store/DuckDb.js';
import { REPO_ROOT, tempDir } from '../../../helpers/campaigns.js';
import { BASE_ROW as BASE } from '../../../fixtures/byo/baseRow.js';

const FIXTURES = path.join(REPO_ROOT, 'test/fixtures/byo');

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('byo-import'));
});
afterEach(() => cleanup());

const jsonl = (rows: readonly unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** importReplies into a fresh tables folder under the test's temp dir. */
async function importInto(target: string, opts: { chunkRows?: number; flushChars?: number } = {}) {
  // Hidden, so that importing `dir` itself does not read the tables back as replies.
  const tablesDir = path.join(dir, '.out', `tables-${Math.random().toString(36).slice(2)}`);
  return { tablesDir, ...(await importReplies(target, { tablesDir, ...opts })) };
}

/** Rows of one written table, model and language from the path, in a stable order. */
function table(tablesDir: string, name: 'prompts' | 'replies' | 'readings', order = 'ALL') {
  return readParquet<Record<string, unknown>>(
    `${tablesDir}/generate/${name}/**/*.parquet`,
    `SELECT * FROM parts ORDER BY ${order}`,
  );
}

async function readings(tablesDir: string) {
  const rows = await table(tablesDir, 'readings', 'model, language, item_id, reader');
  return rows.map((r) => ({ model: r['model'], language: r['language'], reader: r['reader'], label: r['label'] }));
}

describe('importReplies on the committed samples', () => {
  it('reads JSONL and CSV in one folder, keeps given readings and applies the token rule where a reading map is given', async () => {
    const result = await importInto(FIXTURES);
    expect(result.issues).toEqual([]);
    expect(result.summary).toMatchObject({ files: 2, rows: 7, accepted: 7, rejected: 0, readingsGiven: 4 });
    const got = await readings(result.tablesDir);
    // m1/en plain yesno "Yes, it was wrong." → rule P; negint "No." → rule notP beside the given judge reading.
    expect(got.filter((r) => r.model === 'm1' && r.language === 'en' && r.reader === 'rule').map((r) => r.label).sort()).toEqual(['P', 'P', 'notP']);
    // The label item's chosen reply is attempt 2 ("B" → P): the failed attempt 1 is stored, not read.
    const replies = await table(result.tablesDir, 'replies');
    expect(replies.filter((r) => r['model'] === 'm1' && r['language'] === 'en').map((r) => [r['attempt'], r['status']])).toContainEqual([1, 'error']);
    // A free sentence has no token rule reading; the judge's stays.
    expect(got.filter((r) => r.language === 'de')).toEqual([{ model: 'm1', language: 'de', reader: 'judge:j', label: 'P' }]);
    // fr: the rule reading given on the second row wins over computing it; the first is computed.
    expect(got.filter((r) => r.language === 'fr' && r.reader === 'rule').map((r) => r.label).sort()).toEqual(['P', 'notP']);
    expect(result.summary.readingsComputed).toBe(4);
  });
});

describe('bad input: each bad row is named by file, row and field and left out; valid rows stay', () => {
  it('names a missing field, a bad enum value, a wrong type and an unknown language', async () => {
    const good = path.join(dir, 'a-good.jsonl');
    const bad = path.join(dir, 'b-bad.jsonl');
    const { text: _omit, ...noText } = BASE;
    await writeFile(good, jsonl([BASE, { ...BASE, repeat: 1 }]));
    await writeFile(
      bad,
      jsonl([
        { ...BASE, story: 's2' },
        noText,
        { ...BASE, story: 's3', form: 'question' },
        { ...BASE, story: 's4', option_order: 'first' },
        { ...BASE, story: 's5', language: 'xx' },
        { ...BASE, story: 's6', repeat: 1.5 },
      ]),
    );
    const result = await importInto(dir);
    const lines = result.issues.map((i) => `${path.basename(i.file)}: ${i.path}: ${i.message}`);
    expect(lines).toEqual([
      'b-bad.jsonl: row 2, field "text": missing; expected string',
      'b-bad.jsonl: row 3, field "form": expected one of plain, negint, alternative, ornot; got "question"',
      'b-bad.jsonl: row 4, field "option_order": expected number, got "first"',
      'b-bad.jsonl: row 5, field "language": unknown language "xx"; expected one of en, zh, de, ja, ko, fr',
      'b-bad.jsonl: row 6, field "repeat": expected an integer, got 1.5',
    ]);
    expect(result.summary).toMatchObject({ files: 2, rows: 8, accepted: 3, rejected: 5 });
    const stories = (await table(result.tablesDir, 'prompts')).map((r) => r['story']).sort();
    expect(stories).toEqual(['s1', 's1', 's2']);
  });

  it('in CSV, converts numbers and JSON fields from text and names what does not convert', async () => {
    const file = path.join(dir, 'r.csv');
    const header = 'model,language,story,story_group,concept_pair,form,constraint,named,option_order,repeat,construction,text,readings,cost_usd';
    await writeFile(
      file,
      [
        header,
        'm1,en,s1,violation,wrong_right,plain,yesno,P,1,0,adj,Yes.,"[{""reader"":""judge:j"",""label"":""P""}]",0.5',
        'm1,en,s2,violation,wrong_right,plain,yesno,P,x,0,adj,Yes.,,',
        'm1,en,s3,violation,wrong_right,plain,yesno,P,0,0,adj,Yes.,[not json,',
        'm1,en,s4,violation,wrong_right,plain,yesno,P,0,0,adj,Yes.,"[{""reader"":""judge:j"",""label"":""maybe""}]",',
        'm1,,s5,violation,wrong_right,plain,yesno,P,0,0,adj,Yes.,,',
      ].join('\n') + '\n',
    );
    const result = await importInto(file);
    const lines = result.issues.map((i) => `${i.path}: ${i.message}`);
    expect(result.issues.every((i) => i.file === file)).toBe(true);
    expect(lines[0]).toBe('row 2, field "option_order": expected number, got "x"');
    expect(lines[1]).toMatch(/^row 3, field "readings": expected JSON \(.*\), got "\[not json"$/);
    expect(lines[2]).toBe('row 4, field "readings[0].label": expected one of P, notP, both, none, invalid; got "maybe"');
    expect(lines[3]).toBe('row 5, field "language": missing; expected one of en, zh, de, ja, ko, fr');
    expect(result.summary.accepted).toBe(1);
    // Columns with one value for every row are not staged but written all the same.
    const run = { campaign: 'byo', phase: 'generate', model: 'm1', language: 'en' };
    expect(await table(result.tablesDir, 'replies')).toMatchObject([
      { ...run, item_id: expect.any(String), attempt: 1, status: 'ok', text: 'Yes.', finish_reason: null, input_tokens: 0, output_tokens: 0, cost_usd: 0.5,
        latency_ms: 0, logprobs_json: null, error_class: null, error_message: null, settings_json: '{}', provider: 'byo/m1', simulated: false, created_at: '' },
    ]);
    expect(await table(result.tablesDir, 'prompts')).toMatchObject([{ ...run, battery: 'far6', option_order: 1, settings_json: '{}', source_item_id: null, messages_json: '[]' }]);
    expect(await table(result.tablesDir, 'readings')).toMatchObject([{ ...run, item_id: expect.any(String), reader: 'judge:j', label: 'P', raw: null, judge_item_id: null }]);
  });

  it('rejects an ok row with neither text nor readings, and duplicate or conflicting rows, listed in row order; a label item without letters is kept and said', async () => {
    const file = path.join(dir, 'r.jsonl');
    await writeFile(
      file,
      jsonl([
        BASE,
        { ...BASE, text: 'No.' },
        { ...BASE, item_id: 'custom', story: 's9' },
        { ...BASE, item_id: 'custom', story: 's10', attempt: 2 },
        { ...BASE, constraint: 'label', text: 'A' },
        { ...BASE, story: 's11', status: 'ok', text: null },
        { ...BASE, story: 's9', story_group: 'acceptable', repeat: 1 },
      ]),
    );
    const result = await importInto(file);
    const lines = result.issues.map((i) => `${i.path}: ${i.message}`);
    expect(lines).toEqual([
      `row 2, field "attempt": attempt 1 of this item is already at ${file} row 1; give repeats their own "repeat" and retries their own "attempt"`,
      `row 4, field "item_id": item custom has other design factors or another repeat at ${file} row 3; one item_id is one item`,
      'row 6, field "text": status is "ok" but there is neither text nor readings; expected the reply text, its readings, or status "error"',
      `row 7, field "story_group": story "s9" is in group "violation" at ${file} row 3; got "acceptable"`,
    ]);
    expect(result.summary).toMatchObject({ accepted: 3, rejected: 4 });
    expect(result.warnings).toContain(`${file}: 1 label row gives no reading_map.letters: the second-listed preference (Same Judgment, Different Yes §6) leaves their items out; everything else is analysed`);
  });

  it('reads a file in chunks that keep file order and row numbers', async () => {
    const rows = Array.from({ length: 7 }, (_, i) => ({ ...BASE, story: `s${i + 1}`, ...(i === 4 ? { named: 'maybe' } : {}) }));
    for (const [name, content] of [
      ['r.jsonl', jsonl(rows)],
      ['r.csv', ['story,named', ...rows.map((r) => `${r.story},${r.named}`)].join('\n') + '\n'],
    ] as const) {
      const file = path.join(dir, name);
      await writeFile(file, content);
      const seen: string[] = [];
      const issues: string[] = [];
      for await (const chunk of readReplyChunks(file, 2)) {
        const v = validateFile(chunk, (r) => seen.push(`${r.row}:${r.value.story}`));
        issues.push(...v.issues.filter((i) => i.path.includes('named')).map((i) => i.path));
      }
      if (name === 'r.jsonl') expect(seen).toEqual(['1:s1', '2:s2', '3:s3', '4:s4', '6:s6', '7:s7']);
      expect(issues).toEqual(['row 5, field "named"']);
    }
  });

  it('reads a .json file holding an array of rows', async () => {
    const file = path.join(dir, 'r.json');
    await writeFile(file, JSON.stringify([BASE, { ...BASE, repeat: 1, language: 'ja' }]));
    const result = await importInto(file);
    expect(result.summary).toMatchObject({ files: 1, rows: 2, accepted: 2 });
    expect(result.partitions.map((p) => p.language).sort()).toEqual(['en', 'ja']);
  });

  it('warns about columns the schema does not know, and rejects nothing for them', async () => {
    const file = path.join(dir, 'r.jsonl');
    await writeFile(file, jsonl([{ ...BASE, my_id: 7, readingmap: {} }]));
    const result = await importInto(file);
    expect(result.issues).toEqual([]);
    expect(result.warnings).toEqual([`${file}: ignored columns "my_id", "readingmap" (not in schema/replies.schema.json)`]);
    expect(result.summary.accepted).toBe(1);
  });

  it('a line that is not JSON is named by its line; input with no valid row is an error naming the file', async () => {
    const broken = path.join(dir, 'broken.jsonl');
    await writeFile(broken, `{"model": \n${JSON.stringify(BASE)}\n`);
    // A broken line is the problem of that line, as a bad row is; the rows around it are read.
    const partly = await importInto(broken);
    expect(partly.issues).toEqual([{ file: broken, path: 'line 1', message: 'not valid JSON (the JSON ends too early)' }]);
    expect(partly.summary).toMatchObject({ rows: 1, accepted: 1 });
    await writeFile(broken, '{"model": \n');
    await expect(importInto(broken)).rejects.toThrow(/no valid reply row in 1 file \(0 rows read\)\n.*broken\.jsonl: line 1: not valid JSON/);

    const empty = path.join(dir, 'sub');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(empty);
    const onlyBad = path.join(empty, 'bad.jsonl');
    await writeFile(onlyBad, jsonl([{ ...BASE, language: 'xx' }]));
    await expect(importInto(empty)).rejects.toThrow(/no valid reply row in 1 file \(1 rows read\)\n.*bad\.jsonl: row 1, field "language"/);
    await expect(importInto(path.join(dir, 'nothing-here'))).rejects.toThrow(/no such file or folder/);
    const txt = path.join(dir, 'r.txt');
    await writeFile(txt, 'x');
    await expect(importInto(txt)).rejects.toThrow(/unsupported file type/);
  });

  it('streams: tiny chunks and flushes after every line give the same tables as one pass; bad rows in between are named', async () => {
    const map = { kind: 'particle', tokens: { yes: 'P', no: 'notP' } };
    const rows: Record<string, unknown>[] = Array.from({ length: 40 }, (_, i) => ({
      ...BASE,
      model: `m${i % 3}`,
      language: i % 2 === 0 ? 'en' : 'de',
      story: `s${i % 7}`,
      repeat: Math.floor(i / 6),
      text: i % 4 === 0 ? 'No.' : 'Yes.',
      reading_map: map,
      ...(i % 5 === 0 ? { readings: [{ reader: 'judge:j', label: 'P' }] } : {}),
      ...(i === 13 ? { language: 'xx' } : {}),
    }));
    // Rows 31 and 32 become later attempts of row 3's item: the rule reads its lowest ok attempt only.
    rows[30] = { ...rows[2]!, attempt: 2, text: 'No.' };
    rows[31] = { ...rows[2]!, attempt: 3, text: null, status: 'error' };
    const file = path.join(dir, 'r.jsonl');
    await writeFile(file, jsonl(rows));
    const whole = await importInto(file);
    const streamed = await importInto(file, { chunkRows: 3, flushChars: 1 });
    for (const r of [whole, streamed]) {
      expect(r.issues.map((i) => i.path)).toEqual(['row 14, field "language"']);
      expect(r.summary).toMatchObject({ rows: 40, accepted: 39, rejected: 1, readingsGiven: 7 });
    }
    expect(streamed.summary).toEqual(whole.summary);
    for (const name of ['prompts', 'replies', 'readings'] as const) {
      const order = name === 'readings' ? 'item_id, reader' : name === 'replies' ? 'item_id, attempt' : 'item_id';
      expect(await table(streamed.tablesDir, name, order), name).toEqual(await table(whole.tablesDir, name, order));
    }
    // 39 replies of 37 items (row 3's item has three attempts); the rule reads each item's lowest ok attempt once.
    expect(await table(whole.tablesDir, 'prompts')).toHaveLength(37);
    expect(await table(whole.tablesDir, 'replies')).toHaveLength(39);
    const rule = (await table(whole.tablesDir, 'readings', 'item_id')).filter((r) => r['reader'] === 'rule');
    expect(rule).toHaveLength(37);
    expect(whole.summary.readingsComputed).toBe(37);
    const retried = (await table(whole.tablesDir, 'replies')).filter((r) => r['attempt'] !== 1);
    expect(retried.map((r) => r['attempt']).sort()).toEqual([2, 3]);
    const itemOf3 = retried[0]?.['item_id'];
    // Row 3 ("Yes.", attempt 1) is the chosen reply, not row 31's "No." at attempt 2.
    expect(rule.filter((r) => r['item_id'] === itemOf3).map((r) => r['label'])).toEqual(['P']);
  });

  it('the rule reads the lowest ok attempt whatever order the attempts come in, in process and in threads', async () => {
    const map = { kind: 'particle', tokens: { yes: 'P', no: 'notP' } };
    const rows = [
      // Item s1: attempt 3 first, then the lower ok attempt 1 ("Yes." → P), then an error.
      { ...BASE, story: 's1', reading_map: map, attempt: 3, text: 'No.' },
      { ...BASE, story: 's1', reading_map: map, attempt: 1, text: 'Yes.' },
      { ...BASE, story: 's1', reading_map: map, attempt: 2, text: null, status: 'error' },
      // Item s2: a failed first attempt, then the ok one ("No." → notP).
      { ...BASE, story: 's2', reading_map: map, attempt: 1, text: null, status: 'error' },
      { ...BASE, story: 's2', reading_map: map, attempt: 2, text: 'No.' },
      // Item s3: no ok attempt, so no rule reading.
      { ...BASE, story: 's3', reading_map: map, attempt: 1, text: null, status: 'error' },
      { ...BASE, story: 's3', reading_map: map, attempt: 2, text: null, status: 'error' },
      // Item s4: one row.
      { ...BASE, story: 's4', reading_map: map, text: 'Yes.' },
    ];
    const file = path.join(dir, 'r.jsonl');
    await writeFile(file, jsonl(rows));
    for (const threads of [0, 2]) {
      const tablesDir = path.join(dir, '.out', `tables-${threads}`);
      const result = await importReplies(file, { tablesDir, threads });
      expect(result.issues).toEqual([]);
      expect(result.summary.readingsComputed).toBe(3);
      const [prompts, rule] = [await table(tablesDir, 'prompts'), await table(tablesDir, 'readings')];
      const story = new Map(prompts.map((p) => [p['item_id'], p['story']]));
      expect(rule.map((r) => [story.get(r['item_id']), r['reader'], r['label']]).sort()).toEqual([
        ['s1', 'rule', 'P'],
        ['s2', 'rule', 'notP'],
        ['s4', 'rule', 'P'],
      ]);
    }
  });

  it('a failed import leaves the tables of the previous one in place', async () => {
    const file = path.join(dir, 'r.jsonl');
    await writeFile(file, jsonl([BASE]));
    const first = await importInto(file);
    await writeFile(file, `{"model": \n`);
    await expect(importReplies(file, { tablesDir: first.tablesDir })).rejects.toThrow(/no valid reply row/);
    expect(await table(first.tablesDir, 'replies')).toHaveLength(1);
    expect((await readdir(path.dirname(first.tablesDir))).filter((n) => n.startsWith('.import-'))).toEqual([]);
  });

  it('reads Parquet as JSON text where that is exact, and by value where a column is a date or time', async () => {
    const db = await DuckDb.open();
    const plain = path.join(dir, 'plain.parquet');
    const timed = path.join(dir, 'timed.parquet');
    const base = `'m1' AS model, 'en' AS language, 's1' AS story, 'violation' AS story_group, 'wrong_right' AS concept_pair,
      'plain' AS form, 'yesno' AS "constraint", 'P' AS named, 0 AS option_order, 'adj' AS construction, 'Yes.' AS text`;
    try {
      await db.run(`COPY (SELECT ${base}, r AS "repeat", CASE WHEN r = 1 THEN 'nan'::DOUBLE ELSE 0.25 END AS cost_usd,
        [{'reader': 'judge:j', 'label': 'P'}] AS readings FROM range(3) t(r)) TO '${plain}' (FORMAT parquet)`);
      await db.run(`COPY (SELECT ${base}, 0 AS "repeat", TIMESTAMP '2026-01-02 03:04:05' AS created_at) TO '${timed}' (FORMAT parquet)`);
    } finally {
      db.close();
    }
    const a = await importInto(plain);
    expect(a.issues.map((i) => `${i.path}: ${i.message}`)).toEqual(['row 2, field "cost_usd": expected number, got "NaN"']);
    expect(a.summary).toMatchObject({ accepted: 2, readingsGiven: 2 });
    expect((await table(a.tablesDir, 'replies', 'cost_usd')).map((r) => r['cost_usd'])).toEqual([0.25, 0.25]);
    const b = await importInto(timed);
    expect(b.issues).toEqual([]);
    expect((await table(b.tablesDir, 'replies')).map((r) => r['created_at'])).toEqual(['2026-01-02T03:04:05.000Z']);
  });
});

describe('the defaults of rows that leave fields out (README "Bring your own replies")', () => {
  it('a story without a group is "ungrouped", a construction defaults to the form, and a reply given only as readings is analysed', async () => {
    const { story_group: _g, construction: _c, ...bare } = BASE;
    const file = path.join(dir, 'r.jsonl');
    await writeFile(
      file,
      jsonl([
        { ...bare, text: null, readings: [{ reader: 'judge:j', label: 'P' }] },
        { ...bare, story: 's2', form: 'negint', text: null, readings: [{ reader: 'judge:j', label: 'notP' }] },
        { ...bare, story: 's3', text: null },
      ]),
    );
    const result = await importInto(file);
    expect(result.issues).toEqual([]);
    expect(result.summary).toMatchObject({ accepted: 3, rejected: 0, readingsGiven: 2 });
    const prompts = await table(result.tablesDir, 'prompts', 'story');
    expect(prompts.map((p) => [p['story'], p['story_group'], p['construction']])).toEqual([
      ['s1', 'ungrouped', 'plain'],
      ['s2', 'ungrouped', 'negint'],
      ['s3', 'ungrouped', 'plain'],
    ]);
    const replies = await table(result.tablesDir, 'replies', 'item_id');
    // Readings without text: an answered reply. Neither: a failed attempt, as before.
    expect(replies.map((r) => [r['status'], r['text']]).sort()).toEqual([
      ['error', null],
      ['ok', null],
      ['ok', null],
    ]);
    expect((await readings(result.tablesDir)).map((r) => r.label).sort()).toEqual(['P', 'notP']);
  });
});
