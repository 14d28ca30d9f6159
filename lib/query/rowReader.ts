/**
 * Reads the columns of SQL-stage rows against their contract. DuckDB returns numbers or bigints,
 * Athena returns strings; both become numbers here, and a value that does not fit is reported with
 * the query file, the row and the column (the first 20), all at once by `done`.
 */
import { CampaignFileError, formatIssues } from '../errors.js';
import type { FileIssue } from '../errors.js';

const MAX_ISSUES = 20;

export class RowReader {
  readonly issues: FileIssue[] = [];
  constructor(readonly file: string) {}

  /**
   * Reads each of a query's rows with `read` on one reader for `file`, then reports every value that
   * broke the contract at once (`done`), so a caller never forgets the finish. `offset`: the index
   * of `rows[0]` in the query's result, for rows read a chunk at a time (errors name that index).
   */
  static readRows<T>(
    file: string,
    rows: readonly Record<string, unknown>[],
    read: (rd: RowReader, row: Record<string, unknown>, index: number) => T,
    offset = 0,
  ): T[] {
    const rd = new RowReader(file);
    const out = rows.map((row, index) => read(rd, row, offset + index));
    rd.done();
    return out;
  }

  /** Records a broken value (also for checks across columns, which the caller makes). */
  fail(index: number, column: string, expected: string, got: unknown): void {
    this.issue(index, column, `expected ${expected}, got ${JSON.stringify(typeof got === 'bigint' ? got.toString() : got) ?? String(got)}`);
  }

  /** Records a problem at `rows[index]<path>` in the caller's words (`path` starts with a column). */
  issue(index: number, path: string, message: string): void {
    if (this.issues.length < MAX_ISSUES) this.issues.push({ file: this.file, path: `rows[${index}].${path}`, message });
  }

  string(row: Record<string, unknown>, index: number, column: string, opts: { nonEmpty?: boolean } = {}): string {
    const v = row[column];
    if (typeof v === 'string' && !(opts.nonEmpty && v === '')) return v;
    this.fail(index, column, opts.nonEmpty ? 'a non-empty string' : 'a string', v);
    return '';
  }

  /** A non-empty string, or null where the column is null. */
  optionalString(row: Record<string, unknown>, index: number, column: string): string | null {
    const v = row[column];
    if (v === null || v === undefined) return null;
    if (typeof v === 'string' && v !== '') return v;
    this.fail(index, column, 'a non-empty string or null', v);
    return null;
  }

  oneOf<T extends string>(row: Record<string, unknown>, index: number, column: string, allowed: readonly T[]): T {
    const v = row[column];
    if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
    this.fail(index, column, `one of ${allowed.join(', ')}`, v);
    return allowed[0] as T;
  }

  number(row: Record<string, unknown>, index: number, column: string, opts: { integer?: boolean; nullable?: boolean } = {}): number {
    const v = row[column];
    if (v === null || v === undefined) {
      if (opts.nullable) return Number.NaN;
      this.fail(index, column, 'a number', v);
      return 0;
    }
    const n = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
    if (!Number.isFinite(n) || (opts.integer && (!Number.isInteger(n) || n < 0))) {
      this.fail(index, column, opts.integer ? 'a non-negative integer' : 'a finite number', v);
      return 0;
    }
    return n;
  }

  done(): void {
    if (this.issues.length > 0) {
      throw new CampaignFileError(`${this.file}: rows do not match the analysis contract\n${formatIssues(this.issues)}`, this.issues);
    }
  }
}
