import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePtrueRows } from '../../../lib/batteries/ptrue/analysis/parseRows.js';
import { PTRUE_SOURCES, PTRUE_SQL } from '../../../lib/batteries/ptrue/sqlLibrary.js';
import { DuckDb } from '../../../lib/store/DuckDb.js';

const TABLES = Object.fromEntries(PTRUE_SOURCES.map(([name]) => [name, name]));

/** Creates table `name` with `columns` (a comma-separated list) holding `rows`, as SQL literals. */
async function createTable(db: DuckDb, name: string, columns: string, rows: readonly (readonly unknown[])[]): Promise<void> {
  const lit = (v: unknown): string => (v === null ? 'NULL' : typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v));
  const values = rows.map((r) => `(${r.map(lit).join(', ')})`).join(', ');
  await db.run(`CREATE TABLE ${name} AS SELECT * FROM (VALUES ${values}) t(${columns})`);
}

let db: DuckDb;
beforeAll(async () => {
  db = await DuckDb.open({ threads: 1 });
  const prompt = 'item_id, model, source_item_id, kind, benchmark, base_item, stratum, content_language, question_language, response_language, verifier_language';
  await createTable(db, 'generate_prompts', prompt, [
    ['g1', 'm', null, 'multiple_choice', 'mmmlu', 'b1', 'math', null, 'en', 'en', null],
    ['g2', 'm', null, 'short_answer', 'lsqa', 'b2', 'ko', 'ko', 'en', 'fr', null],
    ['g3', 'm', null, 'short_answer', 'lsqa', 'b3', 'ko', 'ko', 'en', 'en', null],
    ['g4', 'm', null, 'multiple_choice', 'mmmlu', 'b4', 'math', null, 'en', 'ko', null],
  ]);
  await createTable(db, 'verify_prompts', prompt, [
    ['v1', 'm', 'g1', 'multiple_choice', 'mmmlu', 'b1', 'math', null, 'en', 'en', 'en'],
    ['v2', 'm', 'g1', 'multiple_choice', 'mmmlu', 'b1', 'math', null, 'en', 'en', 'fr'],
    ['v3', 'm', 'g2', 'short_answer', 'lsqa', 'b2', 'ko', 'ko', 'en', 'fr', 'en'],
    ['v4', 'm', 'g3', 'short_answer', 'lsqa', 'b3', 'ko', 'ko', 'en', 'en', 'en'],
    ['v5', 'm', 'g4', 'multiple_choice', 'mmmlu', 'b4', 'math', null, 'en', 'ko', 'en'],
  ]);
  const reply = 'item_id, attempt, status, created_at, logprobs_exact';
  /** The replies of items answered at their first attempt, with the exactness of their logprobs. */
  const okAtFirstAttempt = (ids: string[], exact: boolean | null) => ids.map((id) => [id, 1, 'ok', 't1', exact]);
  await createTable(db, 'generate_replies', reply, [
    ...okAtFirstAttempt(['g1', 'g2', 'g3'], null),
    ['g4', 1, 'error', 't1', null],
    ['g4', 2, 'ok', 't2', null],
  ]);
  await createTable(db, 'verify_replies', reply, [
    ...okAtFirstAttempt(['v1', 'v2', 'v3', 'v4'], true),
    ['v5', 1, 'ok', 't1', false],
    ['v5', 2, 'ok', 't2', true],
  ]);
  const reading = 'item_id, reader, label, value, judge_item_id';
  await createTable(db, 'generate_readings', reading, [
    ['g1', 'option', 'correct', 1, null],
    ['g1', 'language', 'en', 1, null],
    ['g1', 'judge:a', 'incorrect', 2, 'j1'],
    ['g2', 'judge:b', 'incorrect', 2, 'j2'],
    ['g2', 'judge:a', 'correct', 5, 'j3'],
    ['g2', 'language', 'und', 0, null],
    ['g4', 'option', 'unextractable', 0, null],
    ['g4', 'option', 'unextractable', 0, null],
  ]);
  await createTable(db, 'verify_readings', reading, [
    ['v1', 'ptrue', 'True', 0.8, null],
    ['v2', 'ptrue', 'invalid', null, null],
    ['v3', 'ptrue', 'False', 0.3, null],
    ['v4', 'ptrue', 'True', 0.9, null],
    ['v5', 'ptrue', 'False', 0.1, null],
  ]);
});
afterAll(() => db.close());

describe('ptrue_rows.sql', () => {
  it('keeps to SQL that DuckDB and Trino both accept', () => {
    const sql = PTRUE_SQL.render('ptrue_rows', TABLES).replace(/--.*$/gm, '');
    expect(sql).not.toMatch(/::|read_parquet|QUALIFY|COUNT_IF|json_extract|EXCLUDE|GROUP BY ALL|;/i);
  });

  it('gives one row per verifier copy with the reply correctness, P(True), exactness and realised language', async () => {
    const rows = parsePtrueRows(await db.all(PTRUE_SQL.render('ptrue_rows', TABLES)));
    expect(rows.map((r) => [r.base_item, r.v, r.correct, r.p_true, r.flagged, r.exact, r.realised, r.correct_alt])).toEqual([
      // lsqa b2: the first judge by name (judge:a) says correct; language und.
      ['b2', 'en', true, 0.3, false, true, 'und', null],
      // mmmlu b1: option match correct, judged incorrect (correct_alt), an invalid P(True) is null.
      ['b1', 'en', true, 0.8, false, true, 'en', false],
      ['b1', 'fr', true, null, false, true, 'en', false],
      // mmmlu b4: unextractable → incorrect and flagged; the duplicated reading counts once; the
      // verify reply of the lowest ok attempt (bounded) is the one taken.
      ['b4', 'en', false, 0.1, true, false, null, null],
    ]);
    // b3: a short answer nobody judged has no correctness: no row.
    expect(rows.some((r) => r.base_item === 'b3')).toBe(false);
    expect(rows[0]).toMatchObject({ model: 'm', benchmark: 'lsqa', stratum: 'ko', content_language: 'ko', q: 'en', r: 'fr' });
  });
});
