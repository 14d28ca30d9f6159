/**
 * SQL text for DuckDB: a string literal and a quoted identifier. A module of its own so that what
 * DuckDb itself uses (storedParts.ts, which DuckDb calls) quotes the same way without importing it.
 */

/** A SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A SQL identifier, quoted (`constraint` and `repeat` are keywords). */
export function sqlIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
