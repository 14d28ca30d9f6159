/**
 * Rows into a DuckDB table through its appender, cell by typed cell (ParquetWriter.writeFile).
 * The writer used to stage every row as a JSON line that DuckDB then parsed again; for a part of
 * 20,000 judge prompts (~2.5 KB each) that took about 2.5 times the CPU of appending the same
 * cells (issue 15, bench/README "Parquet parts through DuckDB's appender").
 */
import type { DuckDBAppender } from '@duckdb/node-api';
import { SondageError } from '../errors.js';
import { columnError } from './parquetParts.js';
import type { ColumnDef, ColumnType } from './schemas.js';

/** Appends `v` to the current row; false when `v` is not a value of the column's type. */
type Cell = (appender: DuckDBAppender, v: unknown) => boolean;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

// What JSON.stringify and DuckDB's JSON reader made of a value is kept: NaN and ±Infinity were
// written as null (JSON has no such numbers), so they still are.
const CELLS: Readonly<Record<ColumnType, Cell>> = {
  VARCHAR: (a, v) => typeof v === 'string' && (a.appendVarchar(v), true),
  INTEGER: (a, v) => typeof v === 'number' && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX && (a.appendInteger(v), true),
  BIGINT: (a, v) => typeof v === 'number' && Number.isSafeInteger(v) && (a.appendBigInt(BigInt(v)), true),
  DOUBLE: (a, v) => typeof v === 'number' && (Number.isFinite(v) ? a.appendDouble(v) : a.appendNull(), true),
  BOOLEAN: (a, v) => typeof v === 'boolean' && (a.appendBoolean(v), true),
};

/** `CREATE TABLE` column list for `columns`, without NOT NULL: a part holds what its rows hold. */
export function tableColumnsSql(columns: readonly ColumnDef[], ident: (name: string) => string): string {
  return columns.map((c) => `${ident(c.name)} ${c.type}`).join(', ');
}

/**
 * Appends each row's stored columns, in `columns` order (a missing or null cell is NULL). A cell
 * of the wrong type is a SondageError naming the table, the row and the column: rows from outside
 * are checked before they get here (parquetParts.ts rowChecker), so only a row sondage built
 * wrongly meets it.
 */
export function appendRow(appender: DuckDBAppender, table: string, columns: readonly ColumnDef[], cells: readonly Cell[], row: Record<string, unknown>, index: number): void {
  for (let c = 0; c < columns.length; c++) {
    const col = columns[c] as ColumnDef;
    const v = row[col.name];
    if (v === null || v === undefined) appender.appendNull();
    else if (!(cells[c] as Cell)(appender, v)) {
      const id = typeof row['item_id'] === 'string' ? ` (item_id ${JSON.stringify(row['item_id'])})` : '';
      throw new SondageError(`${table} row ${index}${id}: column ${col.name} ${columnError(v, col) ?? `expects ${col.type}`}`);
    }
  }
  appender.endRow();
}

/** The cell writers of `columns`, in order (for appendRow). */
export function cellsOf(columns: readonly ColumnDef[]): readonly Cell[] {
  return columns.map((c) => CELLS[c.type]);
}
