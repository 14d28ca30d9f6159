/**
 * A campaign's stored Parquet parts checked before they are read: each must be a whole Parquet
 * file holding the columns of its table. DuckDB reads a glob with `union_by_name`, so a part of
 * another table (a readings part copied over a replies part) or of no table at all would be read
 * with NULL columns and give tables that are quietly wrong; a truncated part would fail deep
 * inside a query. Either is refused here, naming the file.
 */
import type { ColumnDef, ColumnType } from './schemas.js';
import { sqlString } from './sqlText.js';
import { StorageError } from './storageErrors.js';

/** What the check needs of a database (DuckDb has it; DuckDb itself calls the check, so no import of it here). */
interface SqlRows {
  all<T>(sql: string): Promise<T[]>;
}

/** The Parquet physical types that hold a column type (both writers use the first; the others read back the same). */
const PHYSICAL: Readonly<Record<ColumnType, readonly string[]>> = {
  VARCHAR: ['BYTE_ARRAY'],
  INTEGER: ['INT32', 'INT64'],
  BIGINT: ['INT64', 'INT32'],
  DOUBLE: ['DOUBLE', 'FLOAT'],
  BOOLEAN: ['BOOLEAN'],
};

function refuse(file: string, table: string, why: string): StorageError {
  return new StorageError(
    `${file}: this stored ${table} part cannot be used: ${why}; nothing was computed. ` +
      'Restore the file from a copy, then run the same command again (moved aside instead, its rows would be missing from the tables: a run does not ask again what the ledger counts as done)',
    file,
  );
}

/**
 * Throws a StorageError naming the first part under `glob` that is not a whole Parquet file, lacks
 * a column `columns` requires (nullable ones may be absent: parts written before they existed), or
 * holds a column in a type that is not its own. Parts without a problem pass silently.
 *
 * Returns the columns the parts hold, over all of them (what `DESCRIBE` of the glob read with
 * `union_by_name` gives, less the path's `model` and `language`): the readers that fill a column
 * older parts lack take it from here instead of reading every part's footer a second time.
 * @example const have = await checkStoredParts(db, tableGlob(dir, 'demo', 'generate', 'replies'), 'replies', REPLY_COLUMNS)
 */
export async function checkStoredParts(db: SqlRows, glob: string, table: string, columns: readonly ColumnDef[]): Promise<Set<string>> {
  let rows: { file_name: string; name: string; type: string | null }[];
  try {
    rows = await db.all(`SELECT file_name, name, type FROM parquet_schema(${sqlString(glob)})`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const file = /[Ff]ile '([^']+)'/.exec(message)?.[1];
    if (file === undefined) throw err;
    const why = /too small/.test(message) ? 'it is too short to be a Parquet file (empty or cut off)' : 'it is not a whole Parquet file (cut off, or overwritten by something else)';
    throw refuse(file, table, why);
  }
  const byFile = new Map<string, Map<string, string | null>>();
  const held = new Set<string>();
  for (const r of rows) {
    const have = byFile.get(r.file_name) ?? new Map<string, string | null>();
    have.set(r.name, r.type);
    byFile.set(r.file_name, have);
    // Columns only: a file's schema root (and any group) has no type of its own.
    if (r.type !== null) held.add(r.name);
  }
  for (const [file, have] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    const missing = columns.filter((c) => !c.nullable && !have.has(c.name)).map((c) => c.name);
    if (missing.length > 0) throw refuse(file, table, `it lacks the column${missing.length === 1 ? '' : 's'} ${missing.join(', ')} that a ${table} part holds (is it a part of another table, or another file?)`);
    for (const c of columns) {
      const type = have.get(c.name);
      if (type !== undefined && type !== null && !PHYSICAL[c.type].includes(type)) {
        throw refuse(file, table, `its column ${c.name} is stored as ${type}, where a ${table} part stores ${c.type} (${PHYSICAL[c.type][0]})`);
      }
    }
  }
  return held;
}

/**
 * Throws a StorageError naming the first part under `glob` holding rows of a phase other than
 * `phase`, the one its folder names: a prompts or replies part of another phase copied in place of
 * one has the right columns, and would be read as this phase's (readings are left out: a phase's
 * readings may sit in the folder of the phase whose replies they read).
 * @example await checkPartsPhase(db, tableGlob(dir, 'demo', 'step3', 'replies'), 'replies', 'step3')
 */
export async function checkPartsPhase(db: SqlRows, glob: string, table: 'prompts' | 'replies', phase: string): Promise<void> {
  const [other] = await db.all<{ file: string; phase: string | null }>(
    `SELECT filename AS file, phase FROM read_parquet(${sqlString(glob)}, filename = true, union_by_name = true) WHERE phase IS DISTINCT FROM ${sqlString(phase)} LIMIT 1`,
  );
  if (other) throw refuse(other.file, table, `it holds rows of phase ${other.phase === null ? '(none)' : JSON.stringify(other.phase)}, and it is stored in the folder of phase ${JSON.stringify(phase)} (a part of another phase copied here?)`);
}
