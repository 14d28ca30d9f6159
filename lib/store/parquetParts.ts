/**
 * What every Parquet part writer shares, whichever engine writes the file (ParquetWriter: DuckDB,
 * for the local run, the plan and the GPU job; JsParquetWriter: pure JavaScript, for the Lambda
 * worker, which ships without DuckDB): where a part goes, the row checks, the writer's interface.
 * No DuckDB import here.
 */
import { SondageError } from '../errors.js';
import type { LanguageCode } from '../core/types.js';
import { partKey } from './layout.js';
import { tableColumns } from './schemas.js';
import { stagedKey } from './stagedParts.js';
import type { ColumnDef, TableRows } from './schemas.js';
import type { BlobStore, TableName } from './types.js';

/** Where a part goes: one table, one partition, one file name. */
export interface PartTarget<T extends TableName = TableName> {
  readonly campaign: string;
  readonly phase: string;
  readonly table: T;
  readonly model: string;
  readonly language: LanguageCode;
  /** `part-<…>.parquet`, unique within the partition. */
  readonly partName: string;
  /**
   * Written under this phase's `_staged/` folder rather than into the table, until the phase's
   * ledger commit of the part publishes it (lib/store/stagedParts.ts).
   */
  readonly stagedFor?: string;
}

/** Where a writer puts `target`: its part key, or its staged key when it waits for a commit. */
export function targetKey(target: PartTarget): string {
  const key = partKey(target.campaign, target.phase, target.table, target.model, target.language, target.partName);
  return target.stagedFor === undefined ? key : stagedKey(target.stagedFor, key);
}

/** The fields every row must share with the file it goes into. */
export interface PartitionCheck {
  readonly campaign: string;
  readonly phase: string;
  readonly model: string;
  readonly language: LanguageCode;
}

export interface WrittenPart {
  readonly key: string;
  readonly rows: number;
  readonly bytes: number;
}

export type Rows<T extends TableName> = Iterable<TableRows[T]> | AsyncIterable<TableRows[T]>;

export interface WriteOptions {
  /** Skip the per-cell checks for rows sondage built itself (a run's prompts and readings). */
  readonly trusted?: boolean;
  /**
   * The table's stored columns. Required for the prompts table, whose columns are its battery's
   * (schemas.ts `promptColumns`); the other tables' are the same for every battery.
   */
  readonly columns?: readonly ColumnDef[];
}

export function columnsOf(table: TableName, columns: readonly ColumnDef[] | undefined): readonly ColumnDef[] {
  if (columns) return columns;
  if (table === 'prompts') throw new SondageError('prompts parts have the columns of their battery: pass WriteOptions.columns (schemas.ts promptColumns)');
  return tableColumns(table);
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function describe(v: unknown): string {
  return `${JSON.stringify(v) ?? String(v)} (${v === null ? 'null' : typeof v})`;
}

/** Why `v` cannot go into `col`, or undefined when it can. */
export function columnError(v: unknown, col: ColumnDef): string | undefined {
  if (v === null || v === undefined) {
    return col.nullable ? undefined : `expects ${col.type}, got ${describe(v)}; the column is not nullable`;
  }
  switch (col.type) {
    case 'VARCHAR':
      if (typeof v === 'string') return undefined;
      break;
    case 'INTEGER':
      if (typeof v === 'number' && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX) return undefined;
      break;
    case 'BIGINT':
      if (typeof v === 'number' && Number.isSafeInteger(v)) return undefined;
      break;
    case 'DOUBLE':
      if (typeof v === 'number' && Number.isFinite(v)) return undefined;
      break;
    case 'BOOLEAN':
      if (typeof v === 'boolean') return undefined;
      break;
  }
  return `expects ${col.type === 'DOUBLE' ? 'a finite number' : col.type}, got ${describe(v)}`;
}

/**
 * Checks a row against the schema and the partition (throws a SondageError naming the row and the
 * column); undefined for trusted rows, which skip the checks.
 */
export function rowChecker(
  table: TableName,
  cols: readonly ColumnDef[],
  partition: PartitionCheck | undefined,
  trusted = false,
): ((row: Record<string, unknown>, index: number) => void) | undefined {
  // Rows the run built itself from typed values skip the per-cell checks (the writer still enforces
  // the column types); rows from outside always get them.
  if (trusted) return undefined;
  const fail = (index: number, row: Record<string, unknown>, what: string): never => {
    const id = typeof row['item_id'] === 'string' ? ` (item_id ${JSON.stringify(row['item_id'])})` : '';
    throw new SondageError(`${table} row ${index}${id}: ${what}`);
  };
  return (row, index) => {
    if (row === null || typeof row !== 'object') fail(index, {}, `expected an object, got ${describe(row)}`);
    if (partition) {
      for (const field of ['campaign', 'phase', 'model', 'language'] as const) {
        if (row[field] !== partition[field]) {
          fail(index, row, `${field} is ${describe(row[field])} but the part file is for ${field} ${JSON.stringify(partition[field])}`);
        }
      }
    }
    for (const col of cols) {
      const error = columnError(row[col.name], col);
      if (error !== undefined) fail(index, row, `column ${col.name} ${error}`);
    }
  };
}

/** Writes parts of the campaign tables into a store: what the runners and the worker need of a writer. */
export interface PartWriter {
  /** Writes one part at `targetKey(target)`: in place where the store is a directory, else through `put`. */
  writePart<T extends TableName>(store: BlobStore, target: PartTarget<T>, rows: Rows<T>, options?: WriteOptions): Promise<WrittenPart>;
  /** Turns a reply journal (NDJSON sondage wrote itself; keys outside the schema ignored) into a part; returns its key. */
  convertPart(store: BlobStore, target: PartTarget, ndjsonPath: string): Promise<string>;
  /** Frees what the writer holds (its engine, its staging folder). */
  close(): Promise<void>;
}
