/**
 * A campaign's stored Parquet parts, damaged between runs: a part cut off, emptied, overwritten by
 * a part of another table or by some other Parquet file, a column in another type. `analyze` and
 * `run` read them; each must refuse naming the part, never give tables from what is left.
 */
import { execFileSync } from 'node:child_process';
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tinyCampaign } from './inputs.js';
import { BIN } from './types.js';
import type { Case, Expect } from './types.js';

const CAMPAIGN = 'data/campaigns/xvalue-demo';
const PARTITION = 'model=alpha/language=en';

/** The one part of a phase's table in the tiny campaign's partition. */
async function partOf(dir: string, phase: string, table: string): Promise<string> {
  const folder = path.join(dir, CAMPAIGN, phase, table, PARTITION);
  const parts = (await readdir(folder)).filter((f) => f.endsWith('.parquet'));
  if (parts.length !== 1) throw new Error(`expected one part in ${folder}, found ${parts.length}`);
  return path.join(folder, parts[0]!);
}

/** Rewrites a Parquet file through DuckDB: `select` reads the file as `part`. */
async function rewriteParquet(file: string, select: string): Promise<void> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  const quote = (p: string): string => `'${p.replace(/'/g, "''")}'`;
  try {
    await connection.run(`CREATE TABLE part AS SELECT * FROM read_parquet(${quote(file)})`);
    await connection.run(`COPY (${select}) TO ${quote(`${file}.new`)} (FORMAT parquet)`);
  } finally {
    connection.closeSync();
    db.closeSync();
  }
  await rm(file);
  await cp(`${file}.new`, file);
  await rm(`${file}.new`);
}

export function storeCases(): Case[] {
  const out: Case[] = [];
  const base = 'store/baseline';
  const add = (name: string, expect: Expect, damage: (dir: string) => Promise<void>, names?: string, command = 'analyze'): void => {
    out.push({
      group: 'store', name: `store/${name}`, expect, baseline: base, compare: `${CAMPAIGN}/results`, ...(names ? { names } : {}),
      setup: async (dir) => {
        await tinyCampaign(dir);
        execFileSync(process.execPath, [BIN, 'run', 'demo.yaml', '--quiet'], { cwd: dir, stdio: 'ignore', env: { ...process.env, NO_COLOR: '1' } });
        // The run's own tables go: an analysis that writes nothing must not pass for one that wrote the same.
        await rm(path.join(dir, CAMPAIGN, 'results'), { recursive: true, force: true });
        await damage(dir);
        return command === 'run' ? ['run', 'demo.yaml', '--quiet'] : ['analyze', 'demo.yaml'];
      },
    });
  };
  add('baseline', 'same', async () => undefined);
  const named = (phase: string, table: string): string => `${phase}/${table}/${PARTITION}/part-`;
  for (const [phase, table] of [['step1', 'replies'], ['step3', 'replies'], ['step1', 'readings'], ['step3', 'readings'], ['defonly', 'prompts']] as const) {
    for (const command of ['analyze', 'run']) {
      const suffix = command === 'run' ? '/run' : '';
      add(`${phase}-${table}-cut-in-half${suffix}`, 'refuse', async (dir) => {
        const file = await partOf(dir, phase, table);
        const bytes = await readFile(file);
        await writeFile(file, bytes.subarray(0, bytes.length >> 1));
      }, named(phase, table), command);
    }
    add(`${phase}-${table}-empty-file`, 'refuse', async (dir) => writeFile(await partOf(dir, phase, table), ''), named(phase, table));
    add(`${phase}-${table}-one-column`, 'refuse', async (dir) => rewriteParquet(await partOf(dir, phase, table), 'SELECT 1 AS x'), named(phase, table));
  }
  add('readings-part-over-replies-part', 'refuse', async (dir) => cp(await partOf(dir, 'step3', 'readings'), await partOf(dir, 'step3', 'replies')), named('step3', 'replies'));
  add('replies-part-over-readings-part', 'refuse', async (dir) => cp(await partOf(dir, 'step3', 'replies'), await partOf(dir, 'step3', 'readings')), named('step3', 'readings'));
  add('readings-part-over-replies-part/run', 'refuse', async (dir) => cp(await partOf(dir, 'step1', 'readings'), await partOf(dir, 'step1', 'replies')), named('step1', 'replies'), 'run');
  add('replies-attempt-as-text', 'refuse', async (dir) => rewriteParquet(await partOf(dir, 'step1', 'replies'), 'SELECT * REPLACE (CAST(attempt AS VARCHAR) AS attempt) FROM part'), named('step1', 'replies'));
  add('readings-label-as-number', 'refuse', async (dir) => rewriteParquet(await partOf(dir, 'step3', 'readings'), 'SELECT * REPLACE (42 AS label) FROM part'), named('step3', 'readings'));
  add('replies-without-a-nullable-column', 'same-or-refuse', async (dir) => rewriteParquet(await partOf(dir, 'step3', 'replies'), 'SELECT * EXCLUDE (logprobs_json) FROM part'));
  // A second copy of a part holds the same replies again: stored replies are counted once.
  add('replies-part-twice', 'same-or-refuse', async (dir) => { const f = await partOf(dir, 'step3', 'replies'); await cp(f, f.replace(/\.parquet$/, '-copy.parquet')); });
  add('readings-part-twice', 'same-or-refuse', async (dir) => { const f = await partOf(dir, 'step3', 'readings'); await cp(f, f.replace(/\.parquet$/, '-copy.parquet')); });
  // A part removed, or emptied of its rows: the ledger still counts its items as done, so a run
  // does not ask them again, and the tables would be computed without them.
  add('replies-part-deleted', 'refuse', async (dir) => rm(await partOf(dir, 'step3', 'replies')), 'step3');
  add('replies-part-deleted/run', 'same-or-refuse', async (dir) => rm(await partOf(dir, 'step3', 'replies')), 'step3', 'run');
  add('replies-part-no-rows', 'refuse', async (dir) => rewriteParquet(await partOf(dir, 'step3', 'replies'), 'SELECT * FROM part LIMIT 0'), named('step3', 'replies'));
  // A part of another phase has the right columns; its `phase` values give it away.
  add('replies-part-of-another-phase', 'refuse', async (dir) => cp(await partOf(dir, 'step1', 'replies'), await partOf(dir, 'step3', 'replies')), named('step3', 'replies'));
  add('prompts-part-of-another-phase', 'refuse', async (dir) => cp(await partOf(dir, 'step1', 'prompts'), await partOf(dir, 'step3', 'prompts')), named('step3', 'prompts'));
  // Readings are read from the stored replies: a readings part removed is read again, or refused.
  add('readings-part-deleted', 'same-or-refuse', async (dir) => rm(await partOf(dir, 'step3', 'readings')), 'step3');
  add('stray-text-file-in-partition', 'same', async (dir) => writeFile(path.join(path.dirname(await partOf(dir, 'step3', 'replies')), 'notes.txt'), 'not a part\n'));
  return out;
}
