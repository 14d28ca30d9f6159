import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeCampaign } from '../../../../lib/batteries/far6/analysis/analyzeCampaign.js';
import { writeResults } from '../../../../lib/batteries/far6/report/report.js';
import type { AnalysisResults } from '../../../../lib/batteries/far6/analysis/types.js';
import { fixtureRows, ParquetFixture } from './fixtures.js';
import { DuckDb } from '../../../../lib/store/DuckDb.js';
import { KeptSubqueries } from '../../../../lib/store/keptSubqueries.js';
import type { Queryable } from '../../../../lib/query/types.js';

/**
 * Ten stories in one cell, read by the rule and by a judge, with plain yes/no items in both keyings
 * and orders, two repeats each, and proposition-label items whose reading maps swap the letters.
 * Rule: named P → P from story 3 on, named notP → P from story 6 on: s = (1[j≥3] + 1[j≥6]) / 2,
 * b = (1[j≥3] − 1[j≥6]) / 2. Judge: P from story 4 on in both keyings: s = 1[j≥4], b = 0.
 * Labels: the second-listed letter is always chosen: second-listed preference 0.5, s 0.5, b 0.
 */
describe('analyzeCampaign on Parquet', () => {
  let fx: ParquetFixture;
  let results: AnalysisResults;
  const cell = { model: 'alpha', language: 'en' };

  beforeAll(async () => {
    fx = await ParquetFixture.create();
    const input = fixtureRows();
    const { prompts, replies, readings } = input;
    for (let j = 0; j < 10; j++) {
      const story = `s${j}`;
      for (const named of ['P', 'notP'] as const) {
        for (const order of [0, 1]) {
          for (const repeat of [0, 1]) {
            const id = `${story}-${named}-${order}-${repeat}`;
            prompts.push({ ...cell, item_id: id, prompt_key: `${story}-${named}-${order}`, story, named, option_order: order, repeat });
            replies.push({ ...cell, item_id: id, attempt: 1, status: 'ok', created_at: '2026-01-01T00:00:00Z' });
            const rule = named === 'P' ? j >= 3 : j >= 6;
            readings.push({ ...cell, item_id: id, reader: 'rule', label: rule ? 'P' : 'notP' });
            readings.push({ ...cell, item_id: id, reader: 'judge:j', label: j >= 4 ? 'P' : 'notP', judge_item_id: `judge-${id}` });

            const lid = `L${id}`;
            const second = order === 0 ? 'notP' : 'P';
            const letters = order === 0 ? [{ letter: 'A', proposition: 'P' }, { letter: 'B', proposition: 'notP' }] : [{ letter: 'A', proposition: 'notP' }, { letter: 'B', proposition: 'P' }];
            prompts.push({ ...cell, item_id: lid, prompt_key: `L${story}-${named}-${order}`, story, named, option_order: order, repeat, constraint: 'label', reading_map_json: JSON.stringify({ kind: 'letter', tokens: {}, letters }) });
            replies.push({ ...cell, item_id: lid, attempt: 1, status: 'ok', created_at: '2026-01-01T00:00:00Z' });
            readings.push({ ...cell, item_id: lid, reader: 'rule', label: second });
          }
        }
      }
    }
    await fx.writeAll(input);
    results = await analyzeCampaign(fx.db, fx.tables);
  });

  afterAll(async () => {
    await fx.close();
  });

  it('recovers the story scores of every readout', () => {
    const rule = results.storyScores.filter((s) => s.readout === 'plain/yesno/rule');
    expect(rule.map((s) => s.s)).toEqual([0, 0, 0, 0.5, 0.5, 0.5, 1, 1, 1, 1]);
    expect(rule.map((s) => s.b)).toEqual([0, 0, 0, 0.5, 0.5, 0.5, 0, 0, 0, 0]);
    const judge = results.storyScores.filter((s) => s.readout === 'plain/yesno/judge:j');
    expect(judge.map((s) => s.s)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    const label = results.storyScores.filter((s) => s.readout === 'plain/label/rule');
    expect(label.every((s) => s.s === 0.5 && s.b === 0)).toBe(true);
  });

  it('measures the habits, including the second-listed preference from the reading maps', () => {
    const habits = Object.fromEntries(results.cellHabits.map((h) => [h.readout, h]));
    expect(habits['plain/yesno/rule']).toMatchObject({ n_stories: 10, second_listed_pref: null, named_term_pull: null });
    expect(habits['plain/yesno/rule']?.keying_bias).toBeCloseTo(0.15, 12);
    expect(habits['plain/label/rule']).toMatchObject({ keying_bias: 0, second_listed_pref: 0.5, n_stories_position: 10, named_term_pull: 0 });
  });

  it('compares the readouts on their common stories', () => {
    const c = results.comparisons.find((x) => x.readout_a === 'plain/yesno/judge:j' && x.readout_b === 'plain/yesno/rule');
    // By hand: Sxy = 1.7, Sxx = 2.4, Syy = 1.725; mean |Δ| = 1.5 / 10.
    expect(c?.n_common).toBe(10);
    expect(c?.r).toBeCloseTo(1.7 / Math.sqrt(2.4 * 1.725), 12);
    expect(c?.mean_abs_diff).toBeCloseTo(0.15, 12);
    // The label profile is constant: no r.
    expect(results.comparisons.find((x) => x.readout_a === 'plain/label/rule')?.r).toBeNull();
    expect(results.convergence).toHaveLength(3);
  });

  it('gives the same results where the queries that several queries include are kept once (KeptSubqueries, as `sondage analyze` runs it)', async () => {
    const db = await DuckDb.open();
    try {
      const kept = new KeptSubqueries(db);
      const made: string[] = [];
      const materialize = kept.materialize.bind(kept);
      kept.materialize = (sql: string) => materialize(sql).then((name) => (made.push(name), name));
      const viaKept = await analyzeCampaign(kept, fx.tables);
      expect(viaKept).toEqual(results);
      // prompt_items, chosen_replies, one_reading: each made once, then read by name in every query that includes it.
      expect(made.length).toBeGreaterThanOrEqual(3 * 2);
      expect(new Set(made).size).toBe(3);
      await kept.drop();
      expect(await db.all("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'sondage_kept_%'")).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('reports what was read and that it was simulated', async () => {
    expect(results.itemRows).toBe(10 * 2 * 2 * 3);
    expect(results.simulated).toBe(true);
    expect(results.cellSummary.find((c) => c.reader === 'judge:j')).toMatchObject({ replies: 80, decisive: 80, n_p: 48, decisive_share: 1, p_share: 0.6 });
    expect(results.replyTotals).toEqual([{ ...cell, attempts: 160, ok_attempts: 160, items_ok: 160, simulated_attempts: 160, cost_usd: expect.closeTo(0.16, 10), attempts_outside_design: 0, cost_outside_design_usd: 0 }]);
    const files = new Map<string, string>();
    await writeResults(async (n, c) => void files.set(n, c), results, { campaign: 'test' });
    expect(files.get('summary.md')).toContain('**Simulated data.**');
  });
});

/**
 * Item rows are estimated a cell at a time as they arrive (CellEstimates): three cells whose rule
 * readings differ, read through DuckDB's chunks cut small, give what all the rows at once give.
 */
describe('analyzeCampaign with the item rows a chunk at a time', () => {
  let fx: ParquetFixture;
  const cells = [
    { model: 'alpha', language: 'en', from: 2 },
    { model: 'alpha', language: 'de', from: 5 },
    { model: 'beta', language: 'en', from: 7 },
  ];

  beforeAll(async () => {
    fx = await ParquetFixture.create();
    const input = fixtureRows();
    for (const { from, ...cell } of cells) {
      for (let j = 0; j < 10; j++) {
        const story = `s${j}`;
        for (const named of ['P', 'notP'] as const) {
          for (const order of [0, 1]) {
            const id = `${cell.model}-${cell.language}-${story}-${named}-${order}`;
            input.prompts.push({ ...cell, item_id: id, prompt_key: id, story, named, option_order: order, repeat: 0 });
            input.replies.push({ ...cell, item_id: id, attempt: 1, status: 'ok', created_at: '2026-01-01T00:00:00Z' });
            input.readings.push({ ...cell, item_id: id, reader: 'rule', label: (named === 'P' ? j >= from : j >= from + order) ? 'P' : 'notP' });
          }
        }
      }
    }
    await fx.writeAll(input);
  });

  afterAll(async () => {
    await fx.close();
  });

  /** fx.db's rows in chunks of `size`, reordered by `order` first (the chunks a Queryable hands out). */
  function chunked(size: number, order?: (a: Record<string, unknown>, b: Record<string, unknown>) => number): Queryable {
    return {
      all: (sql) => fx.db.all(sql),
      startChunks: async <T,>(sql: string) => {
        const rows = await fx.db.all<T>(sql);
        if (order) rows.sort(order as (a: T, b: T) => number);
        return async (each: (rows: T[]) => void) => {
          for (let i = 0; i < rows.length; i += size) each(rows.slice(i, i + size));
        };
      },
    };
  }

  it('gives the results of all the rows at once, whatever the chunks', async () => {
    const whole = await analyzeCampaign({ all: (sql) => fx.db.all(sql) }, fx.tables);
    expect(whole.itemRows).toBe(3 * 10 * 2 * 2);
    expect(new Set(whole.storyScores.map((s) => `${s.model}/${s.language}`))).toEqual(new Set(['alpha/en', 'alpha/de', 'beta/en']));
    expect(await analyzeCampaign(chunked(7), fx.tables)).toEqual(whole);
    expect(await analyzeCampaign(fx.db, fx.tables)).toEqual(whole);
  });

  it('refuses item rows whose cells come apart, naming the cell', async () => {
    const byStory = (a: Record<string, unknown>, b: Record<string, unknown>): number => String(a['story']).localeCompare(String(b['story']));
    await expect(analyzeCampaign(chunked(7, byStory), fx.tables)).rejects.toThrow(/item_shares\.sql: the item rows of cell \w+\/\w+ came in two parts/);
  });
});
