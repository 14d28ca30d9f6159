/**
 * The problems found in replies brought from elsewhere, the same for every battery: what kind of
 * problem each is, where it is (file, line or row, field), a short summary for the terminal and
 * the full list as `import_issues.csv`; and the language check with its close-match suggestion.
 * Here, below the batteries, so that the three studies answer a bad file in the same words.
 */
import type { FileIssue } from '../errors.js';
import { LANGUAGE_INFO } from '../core/languages.js';
import { toCsv } from '../report/csv.js';

/** A problem in the rows; `kind` where the battery names it, else derived from the message. */
export interface ByoIssue extends FileIssue {
  readonly kind?: ByoIssueKind;
}

/**
 * Kinds of problems. `missing cell` is a notice (a cell of the design the file itself claims has no
 * row): listed, never refused. Every other kind is a bad row: the file is refused unless the rows
 * are dropped on request (`--drop-bad-rows`).
 */
export type ByoIssueKind =
  | 'unreadable'
  | 'unknown language'
  | 'missing field'
  | 'unknown field'
  | 'wrong value'
  | 'duplicate or conflict'
  | 'incomplete reply'
  | 'missing cell';

/** The kind that never refuses a file. */
export const NOTICE_KIND: ByoIssueKind = 'missing cell';

/** Columns of `import_issues.csv`. */
export const ISSUE_COLUMNS = ['file', 'location', 'field', 'kind', 'message'] as const;

/** `line 18: correct`, `row 1, field "language"`, `line 9, qa_id` → the place and the field. */
export function locate(path: string): { readonly location: string; readonly field: string } {
  const m = /^((?:row|line) \d+)(?:(?:, field |, |: )(.*))?$/.exec(path);
  if (!m) return { location: '', field: path };
  const field = m[2] ?? '';
  return { location: m[1] as string, field: field.startsWith('"') && field.endsWith('"') && field.length > 1 ? field.slice(1, -1) : field };
}

/** The kind of an issue: as the battery named it, else read from its message. */
export function issueKindOf(issue: ByoIssue): ByoIssueKind {
  if (issue.kind) return issue.kind;
  const m = issue.message;
  if (/not valid JSON|not a JSON|cannot be read|unsupported file type|no such file|expected a header|fields as in the header|the folder holds no/i.test(m)) return 'unreadable';
  if (/unknown language/i.test(m)) return 'unknown language';
  if (/^missing|\bmissing [a-z_]+$|is empty$/i.test(m)) return 'missing field';
  if (/unexpected field|unknown column|no field name|no column name/i.test(m)) return 'unknown field';
  if (/duplicate|a second verdict|conflict|has other design factors|the other correctness|another row/i.test(m)) return 'duplicate or conflict';
  return 'wrong value';
}

/** Whether an issue refuses the file (every kind but the missing-cell notice). */
export function isBadRow(issue: ByoIssue): boolean {
  return issueKindOf(issue) !== NOTICE_KIND;
}

/** The rows of `import_issues.csv`, in the order given. */
export function issuesCsv(issues: readonly ByoIssue[]): string {
  return toCsv(
    ISSUE_COLUMNS,
    issues.map((i) => ({ file: i.file, ...locate(i.path), kind: issueKindOf(i), message: i.message })),
  );
}

/**
 * A summary for the terminal: one heading per kind of problem (and field) with its count, then
 * its first `perKind` issues with file, place, field and what was expected. The full list goes to
 * import_issues.csv: a file with 36,000 bad rows prints a screen, not 36,000 lines.
 * @example summarizeIssues(issues) // ['unknown language in "q": 2 rows', '  rows.csv: line 3: q: …', …]
 */
export function summarizeIssues(issues: readonly ByoIssue[], perKind = 3): string[] {
  const groups = new Map<string, ByoIssue[]>();
  for (const i of issues) {
    const { field } = locate(i.path);
    const key = `${issueKindOf(i)}${field ? ` in "${field}"` : ''}`;
    const list = groups.get(key) ?? [];
    list.push(i);
    groups.set(key, list);
  }
  const out: string[] = [];
  for (const [key, list] of [...groups].sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1))) {
    out.push(`${key}: ${list.length.toLocaleString('en-US')}`);
    for (const i of list.slice(0, perKind)) out.push(`  ${i.file}: ${i.path ? `${i.path}: ` : ''}${i.message}`);
    if (list.length > perKind) out.push(`  … and ${(list.length - perKind).toLocaleString('en-US')} more`);
  }
  return out;
}

// Country codes and other near-misses written for a language code.
const ALIASES: Readonly<Record<string, string>> = {
  jp: 'ja', cn: 'zh', kr: 'ko', gr: 'el', dk: 'da', se: 'sv', cz: 'cs', ua: 'uk', ir: 'fa', il: 'he', br: 'pt', sa: 'ar', eg: 'ar', vn: 'vi', us: 'en', uk: 'en', gb: 'en',
};

function distance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0] as number;
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const here = d[j] as number;
      d[j] = Math.min(here + 1, (d[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = here;
    }
  }
  return d[b.length] as number;
}

/**
 * The allowed language code a user most likely meant, or undefined: the same code in another case
 * or with a region (`EN`, `en-US`, `pt_BR`), a country code (`jp` → `ja`), a language's English name
 * (`Japanese`), or the one allowed code a letter away.
 */
export function closeLanguage(value: string, allowed: readonly string[]): string | undefined {
  const v = value.trim().toLowerCase();
  const ok = (c: string | undefined): string | undefined => (c !== undefined && allowed.includes(c) ? c : undefined);
  const base = v.split(/[-_]/)[0] ?? v;
  const byName = Object.entries(LANGUAGE_INFO).find(([, info]) => info.name.toLowerCase() === v)?.[0];
  const direct = ok(allowed.includes(v) ? v : undefined) ?? ok(base) ?? ok(ALIASES[base]) ?? ok(byName);
  if (direct) return direct;
  const near = allowed.filter((c) => distance(base, c) === 1);
  return near.length === 1 ? near[0] : undefined;
}

/** A value fit to quote in a message: never one that looks like a `KEY=value` line or a secret. */
export function quoteValue(value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value) ?? String(value);
  if (value.includes('=') || value.length > 40 || /^(sk|pk|rk|key)[-_]/i.test(value)) return 'a value that is no language code (not shown)';
  return JSON.stringify(value);
}

/**
 * The message for a language the design does not know, with the allowed codes and the close match.
 * @example languageProblem('jp', ['en', 'ja']) === 'unknown language "jp"; expected one of en, ja (did you mean "ja"?)'
 */
export function languageProblem(value: unknown, allowed: readonly string[]): string {
  const close = typeof value === 'string' ? closeLanguage(value, allowed) : undefined;
  return `unknown language ${quoteValue(value)}; expected one of ${allowed.join(', ')}${close ? ` (did you mean "${close}"?)` : ''}`;
}

/**
 * The cells of the design a file claims that hold no row: within each group (a model), every unit
 * (an item, a reply) is expected in every cell (a language, a strategy) the group has anywhere.
 * Returns, per unit with holes, the cells it lacks; sorted for a stable listing.
 * @example missingCells([['m1', 'i1', 'en'], ['m1', 'i1', 'fr'], ['m1', 'i2', 'en']]) // [{ group: 'm1', unit: 'i2', missing: ['fr'], present: ['en', 'fr'] }]
 */
export function missingCells(entries: Iterable<readonly [group: string, unit: string, cell: string]>): { group: string; unit: string; missing: string[]; present: string[] }[] {
  const cellsOf = new Map<string, Set<string>>();
  const unitCells = new Map<string, Map<string, Set<string>>>();
  for (const [group, unit, cell] of entries) {
    let cells = cellsOf.get(group);
    if (!cells) cellsOf.set(group, (cells = new Set()));
    cells.add(cell);
    let units = unitCells.get(group);
    if (!units) unitCells.set(group, (units = new Map()));
    let has = units.get(unit);
    if (!has) units.set(unit, (has = new Set()));
    has.add(cell);
  }
  const out: { group: string; unit: string; missing: string[]; present: string[] }[] = [];
  for (const [group, units] of [...unitCells].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const all = [...(cellsOf.get(group) as Set<string>)].sort();
    for (const [unit, has] of [...units].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const missing = all.filter((c) => !has.has(c));
      if (missing.length > 0) out.push({ group, unit, missing, present: all });
    }
  }
  return out;
}
