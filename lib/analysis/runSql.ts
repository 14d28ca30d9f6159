/**
 * The portable SQL stage (DESIGN.md "The flow of one campaign": SQL aggregates replies to item
 * level). The files in `sql/` run unchanged on DuckDB and Athena (Trino); only the table
 * placeholders differ, and this module fills them.
 */
import { readFileSync } from 'node:fs';
import type { TableName } from '../store/types.js';
import { AnalysisError } from './errors.js';
import type { Queryable, TableSources } from './types.js';

/** The queries shipped in `lib/analysis/sql/` (deployments must bundle that folder). */
export const SQL_NAMES = [
  'chosen_replies',
  'item_shares',
  'cell_summary',
  'label_maps',
  'reply_totals',
  'reading_agreement',
  'same_replies_shares',
  'prompt_items',
  'one_reading',
] as const;
export type SqlName = (typeof SQL_NAMES)[number];

const TABLES: readonly TableName[] = ['prompts', 'replies', 'readings'];
const SQL_DIR = new URL('./sql/', import.meta.url);
const cache = new Map<string, string>();

function sqlText(name: string): string {
  if (!(SQL_NAMES as readonly string[]).includes(name)) {
    throw new AnalysisError(`unknown analysis query "${name}"; use one of ${SQL_NAMES.join(', ')}`);
  }
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`${name}.sql`, SQL_DIR), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/**
 * The SQL of one query with `{{prompts}}`, `{{replies}}`, `{{readings}}` replaced by `tables` and
 * `{{query:<name>}}` by the named query as a parenthesised subquery.
 * @example renderSql('item_shares', { prompts: 'far6_prompts', replies: 'far6_replies', readings: 'far6_readings' })
 */
export function renderSql(name: string, tables: TableSources): string {
  return render(name, tables, []);
}

function render(name: string, tables: TableSources, stack: readonly string[]): string {
  if (stack.includes(name)) {
    throw new AnalysisError(`analysis query ${name}.sql includes itself (${[...stack, name].join(' → ')})`);
  }
  for (const t of TABLES) {
    const source = tables[t] as string | undefined;
    if (typeof source !== 'string' || source.trim() === '') {
      throw new AnalysisError(`renderSql(${name}): no source for table "${t}"; pass prompts, replies and readings`);
    }
  }
  return sqlText(name).replace(/\{\{\s*([a-z_]+)(?::([a-z_]+))?\s*\}\}/g, (whole, key: string, arg?: string) => {
    if (key === 'query' && arg !== undefined) {
      return `(\n${render(arg, tables, [...stack, name]).trimEnd()}\n)`;
    }
    if ((TABLES as readonly string[]).includes(key) && arg === undefined) return tables[key as TableName];
    throw new AnalysisError(`${name}.sql: unknown placeholder ${whole}; use {{prompts}}, {{replies}}, {{readings}} or {{query:<name>}}`);
  });
}

/**
 * A DuckDB table expression over Parquet files in the hive layout (`…/model=m/language=l/part-*.parquet`).
 * Partition values stay strings (a model called `007` must not become the number 7); files written
 * at different times may differ in nullable columns, hence `union_by_name`.
 * @example parquetSource('/data/campaigns/demo/generate/replies/** /*.parquet')
 */
export function parquetSource(globs: string | readonly string[]): string {
  const list = (typeof globs === 'string' ? [globs] : [...globs]).map((g) => `'${g.replaceAll("'", "''")}'`);
  if (list.length === 0) throw new AnalysisError('parquetSource: no file pattern given');
  return `(SELECT * FROM read_parquet([${list.join(', ')}], hive_partitioning = true, hive_types_autocast = false, union_by_name = true))`;
}

/** Renders a query and runs it; a database error is rethrown naming the query, with the original as cause. */
export async function runSql<T = Record<string, unknown>>(db: Queryable, name: SqlName, tables: TableSources): Promise<T[]> {
  const sql = renderSql(name, tables);
  try {
    return await db.all<T>(sql);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new AnalysisError(`analysis query ${name}.sql failed: ${detail}`, { cause: err });
  }
}
