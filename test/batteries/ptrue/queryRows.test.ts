/**
 * The SQL stage at the paper's size (analysis/queryRows.ts, parseRows.ts appendCompactRows): the
 * analysis queries ptrue_rows one model at a time, over that model's partition of every source, and
 * keeps compact rows; the rows and every estimator's output must be those of one query over every
 * model parsed into plain rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisSources, Queryable } from '../../../lib/api/battery.js';
import { analyzePtrueRows } from '../../../lib/batteries/ptrue/analysis/analyzeRows.js';
import { appendCompactRows, parsePtrueRows } from '../../../lib/batteries/ptrue/analysis/parseRows.js';
import { createPtrueAnalysis } from '../../../lib/batteries/ptrue/analysis/ptrueAnalysis.js';
import { oneModelSources, queryPtrueRows } from '../../../lib/batteries/ptrue/analysis/queryRows.js';
import type { PtrueRow } from '../../../lib/batteries/ptrue/analysis/types.js';
import { PTRUE_SOURCES, PTRUE_SQL } from '../../../lib/batteries/ptrue/sqlLibrary.js';
import { DuckDb } from '../../../lib/store/DuckDb.js';

const TABLES = Object.fromEntries(PTRUE_SOURCES.map(([name]) => [name, name]));
const FIELDS = ['model', 'benchmark', 'base_item', 'stratum', 'content_language', 'q', 'r', 'v', 'correct', 'p_true', 'flagged', 'realised', 'exact', 'correct_alt'] as const;
const plain = (row: PtrueRow): Record<string, unknown> => Object.fromEntries(FIELDS.map((k) => [k, row[k]]));

/** A small deterministic generator (LCG), so that the fixture is the same on every run. */
function numbers(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

async function createTable(db: DuckDb, name: string, columns: string, rows: readonly (readonly unknown[])[]): Promise<void> {
  const lit = (v: unknown): string => (v === null ? 'NULL' : typeof v === 'string' ? `'${v}'` : String(v));
  await db.run(`CREATE TABLE ${name} AS SELECT * FROM (VALUES ${rows.map((r) => `(${r.map(lit).join(', ')})`).join(', ')}) t(${columns})`);
}

const LANGS = ['en', 'fr', 'ko'];
const MODELS = ['beta', 'alpha', 'gamma'];

/** Three models' worth of phase tables, each with its `model` partition column as stored. */
async function fixture(db: DuckDb): Promise<void> {
  const rand = numbers(7);
  const gp: unknown[][] = [];
  const vp: unknown[][] = [];
  const gr: unknown[][] = [];
  const vr: unknown[][] = [];
  const gread: unknown[][] = [];
  const vread: unknown[][] = [];
  for (const model of MODELS) {
    for (const [benchmark, kind] of [['mmmlu', 'multiple_choice'], ['lsqa', 'short_answer']] as const) {
      for (let b = 0; b < 4; b++) {
        for (const q of LANGS) {
          for (const r of LANGS) {
            const g = `${model}/${benchmark}/${b}/${q}/${r}`;
            gp.push([g, model, null, kind, benchmark, `b${b}`, `s${b % 2}`, null, q, r, null]);
            gr.push([g, model, 1, 'ok', 't1', null, true]);
            const label = rand() < 0.6 ? 'correct' : rand() < 0.5 ? 'incorrect' : 'unextractable';
            gread.push([g, model, kind === 'multiple_choice' ? 'option' : 'judge:a', label, 1, null]);
            if (kind === 'multiple_choice' && rand() < 0.5) gread.push([g, model, 'judge:a', rand() < 0.5 ? 'correct' : 'incorrect', 1, 'j']);
            if (rand() < 0.8) gread.push([g, model, 'language', rand() < 0.8 ? r : 'und', 1, null]);
            for (const v of LANGS) {
              const id = `${g}/${v}`;
              vp.push([id, model, g, kind, benchmark, `b${b}`, `s${b % 2}`, null, q, r, v]);
              // A retried verify item: the first ok attempt is the one taken.
              if (rand() < 0.1) vr.push([id, model, 1, 'error', 't0', null, true]);
              vr.push([id, model, 2, 'ok', 't1', rand() < 0.9, true]);
              const p = Math.round(rand() * 1000) / 1000;
              vread.push([id, model, 'ptrue', rand() < 0.05 ? 'invalid' : p > 0.5 ? 'True' : 'False', p, null]);
            }
          }
        }
      }
    }
  }
  const prompt = 'item_id, model, source_item_id, kind, benchmark, base_item, stratum, content_language, question_language, response_language, verifier_language';
  await createTable(db, 'generate_prompts', prompt, gp);
  await createTable(db, 'verify_prompts', prompt, vp);
  const reply = 'item_id, model, attempt, status, created_at, logprobs_exact, simulated';
  await createTable(db, 'generate_replies', reply, gr);
  await createTable(db, 'verify_replies', reply, vr);
  const reading = 'item_id, model, reader, label, value, judge_item_id';
  await createTable(db, 'generate_readings', reading, gread);
  await createTable(db, 'verify_readings', reading, vread);
}

let db: DuckDb;
beforeAll(async () => {
  db = await DuckDb.open({ threads: 1 });
  await fixture(db);
});
afterAll(() => db.close());

describe('the P(True) rows, one model at a time', () => {
  it('keeps the list of models and the one-model sources to SQL that DuckDB and Trino both accept', () => {
    for (const sql of [PTRUE_SQL.render('ptrue_models', TABLES), PTRUE_SQL.render('ptrue_rows', oneModelSources(TABLES, "o'brien"))]) {
      expect(sql.replace(/--.*$/gm, '')).not.toMatch(/::|read_parquet|QUALIFY|COUNT_IF|json_extract|EXCLUDE|GROUP BY ALL|;/i);
    }
    expect(oneModelSources(TABLES, "o'brien").verify_prompts).toBe("(SELECT * FROM verify_prompts one_model WHERE CAST(model AS VARCHAR) = 'o''brien')");
  });

  it('runs every ranking query over one model partition only, not over every reply at once', async () => {
    const seen: string[] = [];
    const spy: Queryable = { all: (sql) => (seen.push(sql), db.all(sql)) };
    const sources: AnalysisSources = { table: (table, [phase]) => `${phase}_${table}`, has: async () => true };
    const results = await createPtrueAnalysis({ draws: 0, seed: 1 }).run(spy, sources, {});
    expect(results.models).toEqual(['alpha', 'beta', 'gamma']);
    const ranking = seen.filter((sql) => /ROW_NUMBER/.test(sql));
    expect(ranking).toHaveLength(MODELS.length);
    for (const [i, model] of ['alpha', 'beta', 'gamma'].entries()) expect(ranking[i]).toContain(`CAST(model AS VARCHAR) = '${model}'`);
  });

  it('gives the rows of one query over every model, in its order, field for field', async () => {
    const whole = parsePtrueRows(await db.all(PTRUE_SQL.render('ptrue_rows', TABLES)));
    const byModel = await queryPtrueRows(db, TABLES);
    expect(whole.length).toBeGreaterThan(500);
    expect(byModel.map(plain)).toEqual(whole.map(plain));
    // A model's own partition only: its rows and no other's.
    const alpha = parsePtrueRows(await db.all(PTRUE_SQL.render('ptrue_rows', oneModelSources(TABLES, 'alpha'))));
    expect(alpha.map(plain)).toEqual(whole.filter((r) => r.model === 'alpha').map(plain));
  });

  it('made compact a chunk at a time, chunks that split a reply\'s verifier copies included, gives the plain rows', async () => {
    const raw = await db.all(PTRUE_SQL.render('ptrue_rows', TABLES));
    for (const size of [1, 7, 100]) {
      const compact: PtrueRow[] = [];
      const strings = new Map<string, string>();
      for (let at = 0; at < raw.length; at += size) appendCompactRows(raw.slice(at, at + size), compact, strings, at);
      expect(compact.map(plain)).toEqual(parsePtrueRows(raw).map(plain));
    }
    // An error names the row by its place in the query's result, not in its chunk.
    const broken = raw.slice(0, 10).map((r, i) => (i === 8 ? { ...r, v: null } : r));
    expect(() => appendCompactRows(broken.slice(7), [], new Map(), 7)).toThrow(/row 8 has no v/);
  });

  it('gives every estimator the outputs the plain rows give', async () => {
    const raw = await db.all(PTRUE_SQL.render('ptrue_rows', TABLES));
    const compact: PtrueRow[] = [];
    appendCompactRows(raw, compact, new Map());
    const opts = { draws: 20, seed: 3, simulated: true };
    expect(analyzePtrueRows(compact, opts)).toEqual(analyzePtrueRows(parsePtrueRows(raw), opts));
  });
});
