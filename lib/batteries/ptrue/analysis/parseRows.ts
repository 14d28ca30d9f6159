/** Rows of sql/ptrue_rows.sql as PtrueRows (DuckDB and Athena return numbers, bigints or strings). */
import type { PtrueRow } from './types.js';

const num = (v: unknown): number | null => (v === null || v === undefined || v === '' ? null : typeof v === 'bigint' ? Number(v) : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const bool = (v: unknown): boolean | null => (v === null || v === undefined || v === '' ? null : v === true || v === 1 || v === '1' || v === 'true' || (typeof v === 'bigint' && v === 1n));

const KEYS = ['model', 'benchmark', 'base_item', 'q', 'r', 'v'] as const;

/** One query row as a PtrueRow; a row missing a key column is a programming mistake and throws. */
function parseRow(r: Record<string, unknown>, i: number): PtrueRow {
  for (const k of KEYS) {
    if (r[k] === null || r[k] === undefined) throw new RangeError(`ptrue_rows: row ${i} has no ${k}`);
  }
  const p = num(r.p_true);
  return {
    model: String(r.model),
    benchmark: String(r.benchmark),
    base_item: String(r.base_item),
    stratum: str(r.stratum),
    content_language: str(r.content_language),
    q: String(r.q),
    r: String(r.r),
    v: String(r.v),
    correct: bool(r.correct) === true,
    p_true: p !== null && Number.isFinite(p) ? p : null,
    flagged: bool(r.flagged) === true,
    realised: str(r.realised),
    exact: bool(r.exact),
    correct_alt: bool(r.correct_alt),
  };
}

/** Converts query rows; a row missing a key column is a programming mistake and throws. */
export function parsePtrueRows(raw: readonly Record<string, unknown>[]): PtrueRow[] {
  return raw.map(parseRow);
}

/** The numbers of one batch of rows, by row: P(True) (NaN: none) and exactness (-1: unknown, 0, 1). */
interface Numbers {
  readonly p: Float64Array;
  readonly exact: Int8Array;
}

/** What the verifier copies of one reply share: all of a row but its verifier language, P(True) and exactness, and where those numbers are. */
type ReplyFacts = Omit<PtrueRow, 'v' | 'p_true' | 'exact'> & { readonly numbers: Numbers };

/**
 * A row that keeps what its reply's verifier copies share in one object it points to, and its
 * P(True) and exactness in its batch's typed arrays. At the paper's size (6.2 M rows, six copies
 * per reply) a row of its own fourteen fields took ~150 bytes of heap and a boxed number, ~0.9 GB
 * and 12 M objects for the garbage collector to mark again and again; this one takes three fields
 * and reads the rest through getters. Every field reads as it would on the row parsePtrueRows
 * gives (a Float64Array holds a double exactly), so the estimators see no difference.
 */
class VerifierCopy implements PtrueRow {
  constructor(
    private readonly reply: ReplyFacts,
    readonly v: string,
    private readonly at: number,
  ) {}
  get p_true(): number | null {
    const p = this.reply.numbers.p[this.at]!;
    return Number.isNaN(p) ? null : p;
  }
  get exact(): boolean | null {
    const e = this.reply.numbers.exact[this.at]!;
    return e < 0 ? null : e === 1;
  }
  get model(): string {
    return this.reply.model;
  }
  get benchmark(): string {
    return this.reply.benchmark;
  }
  get base_item(): string {
    return this.reply.base_item;
  }
  get stratum(): string | null {
    return this.reply.stratum;
  }
  get content_language(): string | null {
    return this.reply.content_language;
  }
  get q(): string {
    return this.reply.q;
  }
  get r(): string {
    return this.reply.r;
  }
  get correct(): boolean {
    return this.reply.correct;
  }
  get flagged(): boolean | undefined {
    return this.reply.flagged;
  }
  get realised(): string | null | undefined {
    return this.reply.realised;
  }
  get correct_alt(): boolean | null | undefined {
    return this.reply.correct_alt;
  }
}

const SHARED = ['model', 'benchmark', 'base_item', 'stratum', 'content_language', 'q', 'r', 'correct', 'flagged', 'realised', 'correct_alt'] as const;

/** Whether two query rows hold the same value in every column a reply's verifier copies share. */
function sameShared(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  for (const k of SHARED) if (a[k] !== b[k]) return false;
  return true;
}

/**
 * Appends query rows to `out` as compact rows (VerifierCopy): a row shares the reply facts of the
 * row before it when every shared field is equal (ptrue_rows sorts a reply's verifier copies next
 * to each other), and every text value is one string per distinct value (`strings`), not one per
 * row. The rows read field for field as parsePtrueRows's, in the same order. `offset`: the index of
 * `raw`'s first row in its query's result (a chunk's), for the row an error names.
 * @example const rows: PtrueRow[] = []; const strings = new Map(); appendCompactRows(batch, rows, strings);
 */
export function appendCompactRows(raw: readonly Record<string, unknown>[], out: PtrueRow[], strings: Map<string, string>, offset = 0): void {
  const one = (s: string | null): string | null => {
    if (s === null) return null;
    const known = strings.get(s);
    if (known !== undefined) return known;
    strings.set(s, s);
    return s;
  };
  const numbers: Numbers = { p: new Float64Array(raw.length), exact: new Int8Array(raw.length) };
  /** Row i's P(True) and exactness, read as parseRow reads them, into the batch's arrays. */
  const setNumbers = (r: Record<string, unknown>, i: number): void => {
    const p = num(r.p_true);
    const exact = bool(r.exact);
    numbers.p[i] = p !== null && Number.isFinite(p) ? p : Number.NaN;
    numbers.exact[i] = exact === null ? -1 : exact ? 1 : 0;
  };
  let last: ReplyFacts | undefined;
  let lastRaw: Record<string, unknown> | undefined;
  for (let i = 0; i < raw.length; i++) {
    const r = raw[i]!;
    // A verifier copy of the reply the row before gave: its shared columns hold the same values
    // (one query's result gives each column one type, so equal values parse equal), and only its
    // own three are read, not a whole parsed row (five rows in six at the paper's size).
    if (last !== undefined && sameShared(r, lastRaw!)) {
      if (r.v === null || r.v === undefined) throw new RangeError(`ptrue_rows: row ${offset + i} has no v`);
      setNumbers(r, i);
      out.push(new VerifierCopy(last, one(String(r.v))!, i));
      continue;
    }
    const row = parseRow(r, offset + i);
    setNumbers(r, i);
    const facts: ReplyFacts =
      last !== undefined && SHARED.every((k) => last![k] === row[k])
        ? last
        : {
            model: one(row.model)!,
            benchmark: one(row.benchmark)!,
            base_item: one(row.base_item)!,
            stratum: one(row.stratum),
            content_language: one(row.content_language),
            q: one(row.q)!,
            r: one(row.r)!,
            correct: row.correct,
            flagged: row.flagged,
            realised: one(row.realised ?? null),
            correct_alt: row.correct_alt,
            numbers,
          };
    last = facts;
    lastRaw = r;
    out.push(new VerifierCopy(facts, one(row.v)!, i));
  }
}
