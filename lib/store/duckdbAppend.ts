/**
 * Rows into a DuckDB table through its appender, cell by typed cell (ParquetWriter.writeFile).
 * The writer used to stage every row as a JSON line that DuckDB then parsed again; for a part of
 * 20,000 judge prompts (~2.5 KB each) that took about 2.5 times the CPU of appending the same
 * cells (bench/README.md, "parquet-parts").
 */
import type { DuckDBAppender } from '@duckdb/node-api';
import { SondageError } from '../errors.js';
import { sqlString } from './DuckDb.js';
import { columnError } from './parquetParts.js';
import type { ColumnDef, ColumnType } from './schemas.js';

/** Appends `v` to the current row; false when `v` is not a value of the column's type. */
type Cell = (appender: DuckDBAppender, v: unknown) => boolean;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** Whether `v` is a value of the column type: what a cell appends and a shared cell's literal holds. */
const FITS: Readonly<Record<ColumnType, (v: unknown) => boolean>> = {
  VARCHAR: (v) => typeof v === 'string',
  INTEGER: (v) => typeof v === 'number' && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX,
  BIGINT: (v) => typeof v === 'number' && Number.isSafeInteger(v),
  DOUBLE: (v) => typeof v === 'number',
  BOOLEAN: (v) => typeof v === 'boolean',
};

// What JSON.stringify and DuckDB's JSON reader made of a value is kept: NaN and ±Infinity were
// written as null (JSON has no such numbers), so they still are.
const CELLS: Readonly<Record<ColumnType, Cell>> = {
  VARCHAR: (a, v) => FITS.VARCHAR(v) && (a.appendVarchar(v as string), true),
  INTEGER: (a, v) => FITS.INTEGER(v) && (a.appendInteger(v as number), true),
  BIGINT: (a, v) => FITS.BIGINT(v) && (a.appendBigInt(BigInt(v as number)), true),
  DOUBLE: (a, v) => FITS.DOUBLE(v) && (Number.isFinite(v) ? a.appendDouble(v as number) : a.appendNull(), true),
  BOOLEAN: (a, v) => FITS.BOOLEAN(v) && (a.appendBoolean(v as boolean), true),
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

/**
 * The columns whose cell is the same in every row, as SQL literals of their type by column name: a
 * part's campaign and phase, a status every reply shares, a column that is always null. The writer
 * selects these as constants when it copies the staged rows out, instead of appending the same cell
 * to every row: each appended cell is a native call, and a string one a UTF-8 copy as well, which
 * made the appender the largest single cost of a partition thread. A value that does
 * not fit its column is never a literal: its row is appended, and refused, as before.
 */
export function sharedColumns(rows: readonly unknown[], columns: readonly ColumnDef[]): Map<string, string> {
  const out = new Map<string, string>();
  const first = rows[0];
  if (rows.length < 2 || first === null || typeof first !== 'object') return out;
  for (const col of columns) {
    // appendRow writes a missing cell as NULL, like a null one.
    const value = (first as Record<string, unknown>)[col.name] ?? null;
    const literal = literalOf(value, col);
    if (literal === undefined) continue;
    let same = true;
    for (let i = 1; i < rows.length && same; i++) {
      const row = rows[i];
      same = row !== null && typeof row === 'object' && ((row as Record<string, unknown>)[col.name] ?? null) === value;
    }
    if (same) out.set(col.name, literal);
  }
  // A staged table needs a column: rows alike in every cell still append their first one.
  if (out.size === columns.length) out.delete((columns[0] as ColumnDef).name);
  return out;
}

/** `value` as a SQL literal of the column's type, as appendRow would have stored it; undefined when it would refuse it. */
function literalOf(value: unknown, col: ColumnDef): string | undefined {
  if (value === null) return `CAST(NULL AS ${col.type})`;
  if (!FITS[col.type](value)) return undefined;
  if (typeof value === 'string') {
    // A NUL character stays a cell: appended, it is kept whole.
    return value.includes('\u0000') ? undefined : `CAST(${sqlString(value)} AS ${col.type})`;
  }
  if (col.type !== 'DOUBLE') return `CAST(${String(value)} AS ${col.type})`;
  // Non-finite numbers are stored as null (CELLS); String(x) is the shortest text that reads back
  // as x, except for -0, which stays a cell.
  if (Object.is(value, -0)) return undefined;
  return Number.isFinite(value) ? `CAST('${String(value)}' AS DOUBLE)` : `CAST(NULL AS DOUBLE)`;
}
