/**
 * The SQL stage's tables on local Parquet (DuckDB): one table over the parts of the given phases,
 * found by glob. A table without any part yet is an empty relation with the table's columns, so
 * every query still runs (and finds nothing).
 */
import type { AnalysisSources } from '../battery/types.js';
import type { TableName } from '../core/types.js';
import { parquetSource } from '../query/sql.js';
import { codedSource, sqlIdent } from '../store/DuckDb.js';
import type { DuckDb } from '../store/DuckDb.js';
import { PARTITION_COLUMNS, tableColumns } from '../store/schemas.js';
import { checkPartsPhase, checkStoredParts } from '../store/storedParts.js';
import type { PromptColumns } from '../store/schemas.js';

/**
 * Sources over `glob(phase, table)` for every phase and table (whether each has files is looked up
 * once, here, so that `table` stays a plain function).
 * @example const sources = await localSources(db, (p, t) => tableGlob(dataDir, 'demo', p, t), ['generate', 'judge'], battery.prompts);
 */
export async function localSources(
  db: DuckDb,
  glob: (phase: string, table: TableName) => string,
  phases: readonly string[],
  prompts: PromptColumns,
  /** Only these models under test and languages (the campaign file's now): partitions the design dropped stay stored, unread. */
  only?: { readonly models: readonly string[]; readonly languages: readonly string[] },
): Promise<AnalysisSources> {
  const found = new Map<string, Set<string>>();
  for (const phase of phases) {
    for (const table of ['prompts', 'replies', 'readings'] as const) {
      if (!(await db.hasFiles(glob(phase, table)))) continue;
      const have = await checkStoredParts(db, glob(phase, table), table, tableColumns(table, prompts));
      if (table !== 'readings') await checkPartsPhase(db, glob(phase, table), table, phase);
      found.set(`${phase}/${table}`, have);
    }
  }
  const levels = await factorLevels(db, glob, phases, prompts, found);
  const empty = (table: TableName): string =>
    `(SELECT ${[...tableColumns(table, prompts).map((c) => `NULL::${c.type} AS ${sqlIdent(c.name)}`), ...PARTITION_COLUMNS.map((c) => `NULL::VARCHAR AS ${sqlIdent(c)}`)].join(', ')} WHERE false)`;
  return {
    table(table, wanted) {
      const present = wanted.filter((p) => found.has(`${p}/${table}`));
      if (present.length === 0) return empty(table);
      // Parts written before a nullable column existed (readings' facet and value) read it as NULL.
      const have = new Set(present.flatMap((p) => [...found.get(`${p}/${table}`)!]));
      const missing = tableColumns(table, prompts).filter((c) => c.nullable && !have.has(c.name));
      const source = parquetSource(present.map((p) => glob(p, table)));
      const withAll = missing.length === 0 ? source : `(SELECT *, ${missing.map((c) => `CAST(NULL AS ${c.type}) AS ${sqlIdent(c.name)}`).join(', ')} FROM ${source} old)`;
      const full = table === 'prompts' ? codedSource(withAll, levels) : withAll;
      if (!only) return full;
      const list = (values: readonly string[]): string => values.map((v) => `'${v.replaceAll("'", "''")}'`).join(', ');
      return `(SELECT * FROM ${full} current WHERE CAST(model AS VARCHAR) IN (${list(only.models)}) AND CAST(language AS VARCHAR) IN (${list(only.languages)}))`;
    },
    has: async (table, phase) => found.has(`${phase}/${table}`) || (!phases.includes(phase) && (await db.hasFiles(glob(phase, table)))),
  };
}

/**
 * ENUM types for the prompts' text factors (DuckDb.levelTypes): a design factor has few levels, and
 * results grouped by factors (FAR-6's item rows: up to a million) reach JS far faster as ENUMs than
 * as text. One type per factor over the prompts of every phase, so that the phases' tables share it;
 * a factor some prompts part lacks (an older data folder) stays text.
 */
async function factorLevels(
  db: DuckDb,
  glob: (phase: string, table: TableName) => string,
  phases: readonly string[],
  prompts: PromptColumns,
  found: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<Map<string, string>> {
  const parts = phases.filter((p) => found.has(`${p}/prompts`));
  if (parts.length === 0) return new Map();
  const factors = prompts.factors
    .filter((c) => c.type === 'VARCHAR' && parts.every((p) => found.get(`${p}/prompts`)!.has(c.name)))
    .map((c) => c.name);
  return db.levelTypes(parquetSource(parts.map((p) => glob(p, 'prompts'))), factors);
}
