import { mkdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localSources } from '../../lib/analysis/localSources.js';
import { FAR6_PROMPT_COLUMNS } from '../../lib/batteries/far6/promptColumns.js';
import { codedSource, DuckDb } from '../../lib/store/DuckDb.js';
import { useTempDir } from '../helpers/campaigns.js';

/**
 * DuckDb.levelTypes: text factors read as ENUMs give the rows the text gives — order, groups,
 * comparisons with values absent from the data, joins with text — and only columns of few levels
 * are coded.
 */
describe('DuckDb.levelTypes', () => {
  let db: DuckDb;
  beforeEach(async () => {
    db = await DuckDb.open({ threads: 1 });
    // Levels whose VARCHAR order differs from their order of appearance, an upper-case level, a
    // long one (past node-api's 12 inline bytes), NULLs, and a column of one level per row.
    await db.run(`CREATE TABLE src AS
      SELECT
        (['zeta-story-with-a-long-name', 'Alpha', 'beta', NULL])[1 + (i % 4)] AS story,
        (['free', 'label'])[1 + (i % 2)] AS form,
        'key-' || i AS prompt_key,
        CAST(NULL AS VARCHAR) AS empty,
        i
      FROM range(0, 40) t(i)`);
  });
  afterEach(() => db.close());

  it('codes the columns of few levels, in VARCHAR order, and leaves the rest as text', async () => {
    const types = await db.levelTypes('src', ['story', 'form', 'prompt_key', 'empty'], 10);
    expect([...types.keys()]).toEqual(['story', 'form']);
    const [type] = await db.all<{ t: string }>(`SELECT typeof(CAST(story AS ${types.get('story')})) AS t FROM src LIMIT 1`);
    expect(type?.t).toBe(`ENUM('Alpha', 'beta', 'zeta-story-with-a-long-name')`);
  });

  it('gives the same rows as the text for ORDER BY, GROUP BY, comparisons and joins', async () => {
    const types = await db.levelTypes('src', ['story', 'form'], 10);
    const coded = codedSource('src', types);
    const queries = (from: string): string[] => [
      `SELECT story, form, count(*) AS n, min(prompt_key) AS first FROM ${from} s GROUP BY 1, 2 ORDER BY 1, 2`,
      `SELECT story, prompt_key FROM ${from} s WHERE story = 'beta' OR story = 'not-a-level' ORDER BY i`,
      `SELECT story || ' [' || form || ']' AS label FROM ${from} s WHERE story LIKE '%long%' OR form IN ('label', 'none') ORDER BY i`,
      `SELECT s.story, t.note FROM ${from} s JOIN (SELECT 'Alpha' AS story, 'joined on text' AS note) t ON t.story = s.story ORDER BY s.i`,
      `SELECT max(story) AS top, min(form) AS low FROM ${from} s`,
    ];
    const plain = queries('src');
    const enums = queries(coded);
    for (const [i, sql] of plain.entries()) expect(await db.all(enums[i]!), sql).toEqual(await db.all(sql));
  });

  it('makes a new type on every call, so two sources never share a name', async () => {
    const a = await db.levelTypes('src', ['form'], 10);
    const b = await db.levelTypes('src', ['form'], 10);
    expect(a.get('form')).not.toBe(b.get('form'));
  });
});

describe('localSources', () => {
  const tmp = useTempDir('level-sources-');

  it("reads the prompts' text factors as ENUMs shared by every phase, and the other columns as they are", async () => {
    const db = await DuckDb.open({ threads: 1 });
    try {
      const glob = (phase: string, table: string): string => `${tmp.dir}/${phase}/${table}/*.parquet`;
      for (const [phase, story] of [['generate', 'syn-001'], ['judge', 'syn-002']] as const) {
        await mkdir(`${tmp.dir}/${phase}/prompts`, { recursive: true });
        await db.run(`COPY (SELECT 'i-' || i AS item_id, 'k-' || i AS prompt_key, 'm1' AS model, 'de' AS language, '${story}' AS story,
          'contested' AS story_group, 'de.reject-endorse' AS concept_pair, 'plain' AS form, 'free' AS "constraint", 'P' AS named,
          CAST(0 AS INTEGER) AS option_order, CAST(0 AS INTEGER) AS "repeat", 'attitude_verb' AS construction,
          'c' AS campaign, '${phase}' AS phase, 'far6' AS battery, '[]' AS messages_json, '{}' AS settings_json,
          '{}' AS reading_map_json, 'p' AS prop_p, 'not p' AS prop_notp FROM range(0, 3) t(i))
          TO '${tmp.dir}/${phase}/prompts/part.parquet' (FORMAT parquet)`);
      }
      const sources = await localSources(db, glob, ['generate', 'judge'], FAR6_PROMPT_COLUMNS);
      const types = await db.all<{ story: string; form: string; prompt_key: string; option_order: string }>(
        `SELECT DISTINCT typeof(story) AS story, typeof(form) AS form, typeof(prompt_key) AS prompt_key, typeof(option_order) AS option_order
         FROM ${sources.table('prompts', ['generate'])} p`,
      );
      expect(types).toEqual([{ story: "ENUM('syn-001', 'syn-002')", form: "ENUM('plain')", prompt_key: 'VARCHAR', option_order: 'INTEGER' }]);
      const judged = await db.all(`SELECT DISTINCT story FROM ${sources.table('prompts', ['judge'])} p`);
      expect(judged).toEqual([{ story: 'syn-002' }]);
    } finally {
      db.close();
    }
  });
});
