/**
 * The viewer's query layer on a real campaign (the X-Value demo, run here): the campaigns, the
 * result tables, a cell followed to exactly the replies it counts, every filter checked against an
 * independent DuckDB read of the same parts, pages that neither skip nor repeat, a reply in full,
 * and names from a request that point outside the campaign refused.
 */
import { copyFile, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SondageError } from '../../lib/errors.js';
import { localCampaignStatus } from '../../lib/cli/commands/status.js';
import { viewProgress } from '../../lib/cli/commands/view.js';
import { DuckDb, readParquet, runLockKey, sqlString, tableGlob } from '../../lib/store/index.js';
import { LocalViewSource, ViewNotFoundError } from '../../lib/view/index.js';
import { DEMO, runDemo } from './demoData.js';

let dataDir: string;
let cleanup: () => Promise<void>;
let source: LocalViewSource;
/** The defonly reply given a second, disagreeing reading. */
let disputed: string;

beforeAll(async () => {
  ({ dataDir, cleanup } = await runDemo('view-source'));
  // A second reader of one definition-only reply, with the other verdict: the one disagreement.
  const [one] = await readParquet<{ item_id: string; label: string; model: string; language: string }>(
    tableGlob(dataDir, DEMO, 'defonly', 'readings'),
    "SELECT item_id, label, model, language FROM parts WHERE model = 'beta' AND facet = 'overall' AND label IN ('Pass', 'Fail') ORDER BY item_id LIMIT 1",
  );
  disputed = one!.item_id;
  const db = await DuckDb.open();
  const folder = path.join(dataDir, 'campaigns', DEMO, 'defonly', 'readings', `model=${one!.model}`, `language=${one!.language}`);
  await db.all(
    `COPY (SELECT * EXCLUDE (model, language) REPLACE ('second' AS reader, ${sqlString(one!.label === 'Pass' ? 'Fail' : 'Pass')} AS label)
           FROM read_parquet(${sqlString(`${folder}/*.parquet`)}) WHERE item_id = ${sqlString(disputed)} AND facet = 'overall')
     TO ${sqlString(path.join(folder, 'part-second-reader.parquet'))} (FORMAT parquet)`,
  ).catch(async () =>
    // The stored files carry no partition columns: nothing to exclude.
    db.all(
      `COPY (SELECT * REPLACE ('second' AS reader, ${sqlString(one!.label === 'Pass' ? 'Fail' : 'Pass')} AS label)
             FROM read_parquet(${sqlString(`${folder}/*.parquet`)}) WHERE item_id = ${sqlString(disputed)} AND facet = 'overall')
       TO ${sqlString(path.join(folder, 'part-second-reader.parquet'))} (FORMAT parquet)`,
    ),
  );
  db.close();
  source = await LocalViewSource.open(dataDir, { threads: 2 });
}, 300_000);

afterAll(async () => {
  await source?.close();
  await cleanup?.();
});

/** Replies of the demo counted straight from the parts, with a WHERE of our own. */
async function countDirect(phases: readonly string[], where = 'true'): Promise<number> {
  let n = 0;
  for (const phase of phases) n += (await readParquet<{ n: number }>(tableGlob(dataDir, DEMO, phase, 'replies'), `SELECT count(*) AS n FROM parts WHERE ${where}`))[0]!.n;
  return n;
}

describe('campaigns and result tables', () => {
  it('lists the campaign with its battery, phases in graph order and result tables', async () => {
    const [c, ...rest] = await source.campaigns();
    expect(rest).toEqual([]);
    expect(c).toMatchObject({ name: DEMO, battery: 'xvalue', phases: ['defonly', 'step1', 'step3', 'step2'], running: false });
    expect(c!.tables).toContain('cells.csv');
    expect(c!.tables.every((t) => t.endsWith('.csv'))).toBe(true);
  });

  it('counts the stored replies per phase, model and language', async () => {
    const o = await source.overview(DEMO);
    const total = o.counts.rows.reduce((s, r) => s + r.replies, 0);
    expect(total).toBe(await countDirect(['defonly', 'step1', 'step2', 'step3']));
    expect(o.counts.rows[0]!.phase).toBe('defonly');
    expect(o.counts.overallPerMinute).toBeGreaterThan(0);
  });

  it('counts each reply part once: a later overview reads only the parts written since', async () => {
    const counted: number[] = [];
    const mine = await LocalViewSource.open(dataDir, { threads: 2, onPartsCounted: (n) => counted.push(n) });
    const folder = path.join(dataDir, 'campaigns', DEMO, 'defonly', 'replies', 'model=beta');
    const [language] = (await readdir(folder)).sort();
    const partDir = path.join(folder, language!);
    const [first] = (await readdir(partDir)).filter((f) => f.endsWith('.parquet')).sort();
    const copy = path.join(partDir, 'part-copied-for-the-test.parquet');
    try {
      // Prepare: a first overview counts every part.
      const before = await mine.overview(DEMO);
      expect(counted[0]).toBeGreaterThan(1);
      // Act: nothing changed, then one part more (a copy of one already there: its replies twice).
      const again = await mine.overview(DEMO);
      await copyFile(path.join(partDir, first!), copy);
      const after = await mine.overview(DEMO);
      // Assess: the second overview read no part, the third only the new one, and the counts follow.
      expect(counted.slice(1)).toEqual([0, 1]);
      expect(again.counts).toEqual(before.counts);
      const direct = (await readParquet<{ n: number }>(path.join(partDir, first!), 'SELECT count(*) AS n FROM parts'))[0]!.n;
      const total = (o: typeof before): number => o.counts.rows.reduce((s, r) => s + r.replies, 0);
      expect(total(after)).toBe(total(before) + direct);
      expect(after.counts.rows.find((r) => r.phase === 'defonly' && r.model === 'beta' && r.language === language!.slice('language='.length))!.replies).toBe(
        before.counts.rows.find((r) => r.phase === 'defonly' && r.model === 'beta' && r.language === language!.slice('language='.length))!.replies + direct,
      );
      // A part removed is no longer counted.
      await rm(copy);
      expect(total(await mine.overview(DEMO))).toBe(total(before));
    } finally {
      await rm(copy, { force: true });
      await mine.close();
    }
  });

  it('reads a result table as its CSV has it', async () => {
    const t = await source.table(DEMO, 'cells.csv');
    const lines = (await readFile(path.join(dataDir, 'campaigns', DEMO, 'results', 'cells.csv'), 'utf8')).trim().split(/\r?\n/);
    expect(t.columns).toEqual(lines[0]!.split(','));
    expect(t.rows).toHaveLength(lines.length - 1);
    expect(t.rows[0]!.join(',')).toBe(lines[1]);
  });
});

describe('a cell to its replies', () => {
  it('the battery maps a model × strategy × language × category cell to exactly the replies it counts', async () => {
    const t = await source.table(DEMO, 'cells.csv');
    const col = (name: string): number => t.columns.indexOf(name);
    // A rubric cell and a definition-only cell.
    for (const strategy of ['defonly', 'rubric']) {
      const row = t.rows.findIndex((r) => r[col('strategy')] === strategy);
      const values = t.rows[row]!;
      const selection = await source.cellSelection(DEMO, 'cells.csv', row, 'accuracy');
      expect(selection).toMatchObject({ model: values[col('model')], language: values[col('language')], factors: { category: values[col('category')] } });
      const page = await source.replies(DEMO, { ...selection!, limit: 500 });
      expect(page.rows.every((r) => r.model === values[col('model')] && r.language === values[col('language')])).toBe(true);
      if (strategy === 'defonly') {
        // One definition-only reply per QA pair of the cell.
        expect(selection!.phases).toEqual(['defonly']);
        expect(page.rows).toHaveLength(Number(values[col('n')]));
      } else {
        expect(selection!.phases).toEqual(['step1', 'step2', 'step3']);
        expect(new Set(page.rows.map((r) => r.phase))).toEqual(new Set(['step1', 'step2', 'step3']));
      }
    }
  });

  it('a row that pools the campaign has no replies of its own; an unknown cell is refused', async () => {
    await expect(source.cellSelection(DEMO, 'cells.csv', 99_999, 'accuracy')).rejects.toBeInstanceOf(ViewNotFoundError);
    await expect(source.cellSelection(DEMO, 'cells.csv', 0, 'no_such_column')).rejects.toBeInstanceOf(ViewNotFoundError);
  });
});

describe('filters, search and pages', () => {
  it('filters by phase, model and language as the parts hold them', async () => {
    const q = { phases: ['step3'], model: 'alpha', language: 'ar' };
    expect(await source.count(DEMO, q)).toBe(await countDirect(['step3'], "model = 'alpha' AND language = 'ar'"));
    const page = await source.replies(DEMO, { ...q, limit: 500 });
    expect(page.rows.length).toBeGreaterThan(0);
    expect(page.rows.every((r) => r.phase === 'step3' && r.model === 'alpha' && r.language === 'ar')).toBe(true);
  });

  it('filters by reader label, and shows every reading of each reply', async () => {
    const page = await source.replies(DEMO, { phases: ['defonly'], reader: 'parse', label: 'Fail', limit: 500 });
    expect(page.rows.length).toBeGreaterThan(0);
    expect(page.rows.every((r) => r.readings.split(' ').includes('parse/overall=Fail'))).toBe(true);
    const direct = await readParquet<{ n: number }>(tableGlob(dataDir, DEMO, 'defonly', 'readings'), "SELECT count(DISTINCT item_id) AS n FROM parts WHERE reader = 'parse' AND label = 'Fail'");
    expect(await source.count(DEMO, { phases: ['defonly'], reader: 'parse', label: 'Fail' })).toBe(direct[0]!.n);
  });

  it('finds the replies on which two readers disagree', async () => {
    const page = await source.replies(DEMO, { disagree: true });
    expect(page.rows.map((r) => r.item_id)).toEqual([disputed]);
    expect(page.rows[0]!.readings).toMatch(/parse\/overall=(Pass|Fail) second\/overall=(Pass|Fail)/);
  });

  it('searches the reply texts, case-insensitively, with % and _ taken literally', async () => {
    const [sample] = await source.replies(DEMO, { phases: ['step1'], limit: 1 }).then((p) => p.rows);
    const word = /[A-Za-z]{5,}/.exec(sample!.text!)![0];
    const n = await source.count(DEMO, { search: word.toUpperCase() });
    expect(n).toBe(await countDirect(['defonly', 'step1', 'step2', 'step3'], `lower(text) LIKE ${sqlString(`%${word.toLowerCase()}%`)}`));
    expect(n).toBeGreaterThan(0);
    expect(await source.count(DEMO, { search: '%' })).toBe(await countDirect(['defonly', 'step1', 'step2', 'step3'], "contains(text, '%')"));
  });

  it('pages neither skip nor repeat a reply, and the last page says there is no next', async () => {
    const q = { phases: ['defonly'], model: 'alpha' };
    const total = await source.count(DEMO, q);
    const seen: string[] = [];
    let offset = 0;
    for (;;) {
      const page = await source.replies(DEMO, { ...q, offset, limit: 25 });
      seen.push(...page.rows.map((r) => `${r.item_id}#${r.attempt}`));
      if (!page.more) break;
      expect(page.rows).toHaveLength(25);
      offset += 25;
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
  });
});

describe('pages read partition by partition', () => {
  it('follow their cursors through every phase and partition, in the order of the pages read by offset', async () => {
    const q = { phases: ['defonly', 'step1', 'step3'] };
    const byCursor: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await source.replies(DEMO, { ...q, limit: 40, ...(cursor ? { cursor } : {}) });
      byCursor.push(...page.rows.map((r) => `${r.phase}/${r.item_id}#${r.attempt}`));
      expect(page.more).toBe(page.next !== undefined);
      cursor = page.next;
      pages++;
    } while (cursor);
    const byOffset: string[] = [];
    for (let offset = 0; ; offset += 40) {
      const page = await source.replies(DEMO, { ...q, limit: 40, offset });
      byOffset.push(...page.rows.map((r) => `${r.phase}/${r.item_id}#${r.attempt}`));
      if (!page.more) break;
    }
    expect(pages).toBeGreaterThan(3);
    expect(byCursor).toHaveLength(await source.count(DEMO, q));
    expect(byCursor).toEqual(byOffset);
  });

  it('a cursor that this viewer did not give is refused', async () => {
    await expect(source.replies(DEMO, { cursor: 'nonsense' })).rejects.toBeInstanceOf(SondageError);
  });
});

describe('one reply', () => {
  it('has its prompt, its attempts with status and cost, and every reading', async () => {
    const [row] = (await source.replies(DEMO, { phases: ['step1'], limit: 1 })).rows;
    const r = await source.reply(DEMO, 'step1', row!.item_id, { model: row!.model, language: row!.language });
    expect(r).toBeDefined();
    expect(r!.messages.length).toBeGreaterThan(0);
    expect(r!.messages.some((m) => m.role === 'user' && m.content.length > 0)).toBe(true);
    expect(r!.attempts[0]!.text!.startsWith(row!.text!)).toBe(true);
    expect(r!.attempts[0]).toMatchObject({ status: 'ok', simulated: true });
    expect(r!.attempts[0]!.cost_usd).toBeGreaterThan(0);
    expect(new Set(r!.readings.map((x) => x.facet))).toEqual(new Set(['scope', 'nature', 'core_issue']));
    expect(r!.prompt).toMatchObject({ strategy: 'rubric', item_id: row!.item_id });
    // Found without its phase too (a link from a reading to the reply it reads).
    expect((await source.reply(DEMO, '', row!.item_id))?.phase).toBe('step1');
  });
});

describe('live progress, as `sondage status` reads it', () => {
  it("the overview carries the status's phases and spend, no local path; a live run's lock shows it running", async () => {
    const live = await LocalViewSource.open(dataDir, { progress: (name) => viewProgress(dataDir, name), threads: 1 });
    const lock = path.join(dataDir, runLockKey(DEMO));
    try {
      const status = await localCampaignStatus(dataDir, { name: DEMO }, 5);
      const o = await live.overview(DEMO);
      expect(o.progress!.phases).toEqual(status.phases);
      expect(o.progress!.budget).toEqual(status.budget);
      expect(o.progress!.phases.every((p) => p.done === p.planned)).toBe(true);
      expect(JSON.stringify(o)).not.toContain(dataDir);
      expect(o.campaign.running).toBe(false);
      // A run holding the lock: this process, alive.
      await writeFile(lock, JSON.stringify({ pid: process.pid, host: os.hostname(), started_at: new Date().toISOString() }));
      const running = await live.overview(DEMO);
      expect(running.campaign.running).toBe(true);
      expect(running.progress!.run).toMatch(/^running \(pid \d+\)/);
    } finally {
      await rm(lock, { force: true });
      await live.close();
    }
  });

  it('counts failures by kind', async () => {
    const failure = (error: string) => ({ at: '2026-01-01T00:00:00Z', where: 'defonly alpha/en x', error, cause: '' });
    const live = await LocalViewSource.open(dataDir, {
      threads: 1,
      progress: async () => ({ run: 'not running', phases: [], failures: [failure('rate_limit'), failure('bad_request'), failure('rate_limit')], failuresTotal: 3 }),
    });
    try {
      expect((await live.overview(DEMO)).failuresByKind).toEqual({ rate_limit: 2, bad_request: 1 });
    } finally {
      await live.close();
    }
  });
});

describe('names from a request never leave the campaign', () => {
  it.each([
    ['a campaign outside the data folder', () => source.overview('../..')],
    ['a campaign that is not there', () => source.overview('other')],
    ['a table outside results/', () => source.table(DEMO, '../plan.json')],
    ['a table that is not a CSV', () => source.table(DEMO, 'summary.md')],
    ['the ledger', () => source.table(DEMO, '../../../ledger.sqlite')],
    ['a phase outside the campaign', () => source.replies(DEMO, { phases: ['../../..'] })],
    ['an item id with SQL in it', () => source.reply(DEMO, 'defonly', "x' OR '1'='1")],
  ])('refuses %s', async (_what, ask) => {
    await expect(ask()).rejects.toBeInstanceOf(ViewNotFoundError);
  });

  it('refuses a prompt column that is not a plain name', async () => {
    await expect(source.replies(DEMO, { factors: { 'x") OR true --': 'y' } })).rejects.toBeInstanceOf(SondageError);
  });
});
