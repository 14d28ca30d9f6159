/**
 * A DuckDB result's rows as plain objects, streamed chunk by chunk (DuckDB's copy of a chunk is
 * freed once it is converted, so a large result is never held twice). This replaces node-api's
 * `yieldConvertedRowObjects` for the analysis's large results: FAR-6's 693,550 item rows took
 * ~3.4 s to convert that way and ~2.0 s this way (the FAR-6 analysis bench), because
 * - values are taken column by column, so each column's type is looked up once, and a column of a
 *   type whose vector already gives the JS value (text, ENUM, booleans, 32-bit integers, floats)
 *   skips the converter, which would return the same value;
 * - each row is one object literal of a fixed shape, made by a function compiled for the result's
 *   column names, where the library adds the properties one by one to an empty object;
 * - a short text (12 bytes or fewer, which DuckDB keeps inside the vector) equal to the row
 *   before's, byte for byte, is that row's string, not a new one: sorted results repeat their
 *   first columns (FAR-6's model, language, reader) for long runs, and each copy was a decode and
 *   a string the rows kept alive.
 */
import type { DuckDBDataChunk, DuckDBResult, DuckDBValueConverter, DuckDBVector, JS } from '@duckdb/node-api';
import type { ChunkOptions } from '../query/types.js';
import type { DuckDbApi } from './duckdbApi.js';

type RowMaker = (columns: readonly unknown[][], row: number) => Record<string, JS>;

/** Type ids whose vectors' getItem gives what the JS converter would (null for NULL). */
function plainTypeIds(api: typeof DuckDbApi): ReadonlySet<number> {
  const t = api.DuckDBTypeId;
  return new Set([t.VARCHAR, t.ENUM, t.BOOLEAN, t.TINYINT, t.SMALLINT, t.INTEGER, t.UTINYINT, t.USMALLINT, t.UINTEGER, t.FLOAT, t.DOUBLE]);
}

/**
 * `(c, i) => ({ "name": c[0][i], … })` for these column names. Compiled, not a loop, so that every
 * row of a result shares one hidden class from its first property on. Names are quoted by
 * JSON.stringify, which makes any name (quotes, newlines, U+2028) a valid string literal.
 */
function rowMaker(names: readonly string[]): RowMaker {
  // Built from quoted column names only.
  return new Function('c', 'i', `return { ${names.map((n, k) => `${JSON.stringify(n)}: c[${k}][i]`).join(', ')} };`) as RowMaker;
}

/**
 * A VARCHAR vector's values, each short one that repeats the one before (the same 16 bytes of
 * DuckDB's string_t: length, then the text inline) given as that one. The vector's bytes and
 * validity are read through its `dataView` and `validity`, which node-api does not declare;
 * without them (another node-api) every value is the vector's own. A NULL is never taken for a
 * repeat: only a value the validity says is there, after a string.
 */
export function readText(vector: { getItem(i: number): unknown }, n: number, values: unknown[]): void {
  const { dataView: view, validity } = vector as unknown as { dataView?: unknown; validity?: { itemValid?: unknown } };
  const valid = typeof validity?.itemValid === 'function' ? (validity.itemValid as (i: number) => boolean).bind(validity) : undefined;
  if (!(view instanceof DataView) || view.byteLength < n * 16 || valid === undefined) {
    for (let i = 0; i < n; i++) values[i] = vector.getItem(i);
    return;
  }
  let last: unknown = null;
  let w0 = -1;
  let w1 = 0;
  let w2 = 0;
  let w3 = 0;
  for (let i = 0; i < n; i++) {
    const o = i * 16;
    const len = view.getUint32(o, true);
    if (len <= 12 && typeof last === 'string') {
      const a1 = view.getUint32(o + 4, true);
      const a2 = view.getUint32(o + 8, true);
      const a3 = view.getUint32(o + 12, true);
      if (len === w0 && a1 === w1 && a2 === w2 && a3 === w3 && valid(i)) {
        values[i] = last;
        continue;
      }
    }
    const v = vector.getItem(i);
    values[i] = v;
    last = v;
    if (len <= 12 && typeof v === 'string') {
      w0 = len;
      w1 = view.getUint32(o + 4, true);
      w2 = view.getUint32(o + 8, true);
      w3 = view.getUint32(o + 12, true);
    } else {
      w0 = -1;
    }
  }
}

/** A ChunkOptions.textOnlyWhere condition by column position. */
interface Condition {
  readonly column: number;
  readonly is: string;
}

/** textOnlyWhere by the result's column positions; a condition on a column the result lacks reads its column whole. */
function conditionsOf(names: readonly string[], options: ChunkOptions): Map<number, Condition> {
  const out = new Map<number, Condition>();
  const conditions = options.textOnlyWhere ?? {};
  for (const [name, { column, is }] of Object.entries(conditions)) {
    const at = names.indexOf(name);
    const where = names.indexOf(column);
    // A condition on a column read by a condition itself would read values not there yet.
    if (at >= 0 && where >= 0 && !Object.hasOwn(conditions, column)) out.set(at, { column: where, is });
  }
  return out;
}

export class DuckDbRows {
  private readonly plain: ReadonlySet<number>;
  private readonly varchar: number;

  constructor(
    api: typeof DuckDbApi,
    private readonly converter: DuckDBValueConverter<JS>,
  ) {
    this.plain = plainTypeIds(api);
    this.varchar = api.DuckDBTypeId.VARCHAR;
  }

  async rowsOf<T>(result: DuckDBResult): Promise<T[]> {
    const rows: T[] = [];
    await this.eachChunk<T>(result, (chunk) => {
      for (const row of chunk) rows.push(row);
    });
    return rows;
  }

  /**
   * The rows of `result` one DuckDB chunk (up to 2,048 rows) at a time, each chunk handed to `each`
   * before the next is fetched. `options.textOnlyWhere`: those text columns read only in the rows
   * its condition names (undefined in the others).
   */
  async eachChunk<T>(result: DuckDBResult, each: (rows: T[]) => void, options: ChunkOptions = {}): Promise<void> {
    const names = result.deduplicatedColumnNames();
    const make = rowMaker(names);
    const onlyWhere = conditionsOf(names, options);
    for (;;) {
      const chunk = await result.fetchChunk();
      // rowCount is a native call: read once per chunk, not once per row.
      const n = chunk ? chunk.rowCount : 0;
      if (!chunk || n === 0) break;
      const columns = this.columnsOf(chunk, names.length, onlyWhere);
      const rows = new Array<T>(n);
      for (let i = 0; i < n; i++) rows[i] = make(columns, i) as T;
      each(rows);
    }
  }

  private columnsOf(chunk: DuckDBDataChunk, count: number, onlyWhere: ReadonlyMap<number, Condition>): unknown[][] {
    const columns: unknown[][] = [];
    const n = chunk.rowCount;
    const later: [DuckDBVector, unknown[], Condition][] = [];
    for (let c = 0; c < count; c++) {
      const vector = chunk.getColumnVector(c);
      const type = vector.type;
      const values = new Array<unknown>(n);
      columns.push(values);
      const condition = onlyWhere.get(c);
      // Read after the others: the condition's column may come later in the result.
      if (condition !== undefined && type.typeId === this.varchar) {
        later.push([vector, values, condition]);
        continue;
      }
      if (type.typeId === this.varchar) readText(vector, n, values);
      else if (this.plain.has(type.typeId)) for (let i = 0; i < n; i++) values[i] = vector.getItem(i);
      else for (let i = 0; i < n; i++) values[i] = this.converter(vector.getItem(i), type, this.converter);
    }
    for (const [vector, values, { column, is }] of later) {
      const where = columns[column] as unknown[];
      for (let i = 0; i < n; i++) if (where[i] === is) values[i] = vector.getItem(i);
    }
    return columns;
  }
}
