/**
 * The analysis queries added for the cross-cell study (reading_agreement, same_replies_shares). They
 * live in `sql/` beside the shipped ones and use the same placeholders; renderSql's list of names
 * (runSql.ts) does not include them yet, so they are rendered here, with chosen_replies.sql
 * included through renderSql.
 */
import { readFileSync } from 'node:fs';
import { AnalysisError } from './errors.js';
import { renderSql } from './runSql.js';
import type { Queryable, TableSources } from './types.js';

export const EXTRA_SQL_NAMES = ['reading_agreement', 'same_replies_shares'] as const;
export type ExtraSqlName = (typeof EXTRA_SQL_NAMES)[number];

const cache = new Map<ExtraSqlName, string>();

/** The SQL of one added query with its table and `{{query:chosen_replies}}` placeholders filled. */
export function renderExtraSql(name: ExtraSqlName, tables: TableSources): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), 'utf8');
    cache.set(name, text);
  }
  const chosen = renderSql('chosen_replies', tables);
  return text.replace(/\{\{\s*([a-z_]+)(?::([a-z_]+))?\s*\}\}/g, (whole, key: string, arg?: string) => {
    if (key === 'query' && arg === 'chosen_replies') return `(\n${chosen.trimEnd()}\n)`;
    if ((key === 'prompts' || key === 'replies' || key === 'readings') && arg === undefined) return tables[key];
    throw new AnalysisError(`${name}.sql: unknown placeholder ${whole}; use {{prompts}}, {{replies}}, {{readings}} or {{query:chosen_replies}}`);
  });
}

/** Renders and runs one added query; a database error is rethrown naming the query. */
export async function runExtraSql(db: Queryable, name: ExtraSqlName, tables: TableSources): Promise<Record<string, unknown>[]> {
  const sql = renderExtraSql(name, tables);
  try {
    return await db.all(sql);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new AnalysisError(`analysis query ${name}.sql failed: ${detail}`, { cause: err });
  }
}
