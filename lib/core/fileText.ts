/**
 * Reading the files a campaign names (the campaign itself, a battery's data) so that a mistake is
 * reported as the file, the place inside it and what was expected — and never as the file's
 * content. A wrong path pointed at a `.env` must not print the key it holds: values are shown at
 * most {@link SHOWN_CHARS} characters long, a file's top-level value only by its kind, and JSON
 * and YAML syntax errors without the excerpt of the input their parsers put in their messages.
 */
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Document } from 'yaml';
import { CampaignFileError, formatIssues } from '../errors.js';
import type { FileIssue } from '../errors.js';

/** The most characters of a value a message shows. */
export const SHOWN_CHARS = 60;

/**
 * A value as a message shows it: a string quoted and cut to {@link SHOWN_CHARS} characters, a
 * number or boolean as is, a container by its kind.
 * @example shortValue('x'.repeat(100)) // '"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…"' (60 characters)
 */
export function shortValue(value: unknown): string {
  if (typeof value === 'string') {
    if (looksLikeSecret(value)) return `text that looks like a secret (${value.length} characters, not shown)`;
    const quoted = JSON.stringify(value);
    return quoted.length > SHOWN_CHARS ? `${quoted.slice(0, SHOWN_CHARS - 2)}…"` : quoted;
  }
  if (typeof value === 'number' || typeof value === 'bigint') {
    const s = String(value);
    return s.length > SHOWN_CHARS ? `${s.slice(0, SHOWN_CHARS - 1)}…` : s;
  }
  return kindOf(value);
}

/**
 * A cell or field that holds a key rather than data: an environment assignment
 * (`OPENAI_API_KEY=…`, `export AWS_SECRET_ACCESS_KEY=…`) or a provider key's shape (`sk-…`,
 * `AKIA…`, `ghp_…`). Cutting it to SHOWN_CHARS would still print most of a short key.
 * @example looksLikeSecret('OPENAI_API_KEY=sk-proj-abc') // true
 */
export function looksLikeSecret(value: string): boolean {
  return /^\s*(export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=/.test(value) || /\b(sk-[A-Za-z0-9_-]{12,}|sk_(live|test)_[A-Za-z0-9]{8,}|A[KS]IA[A-Z0-9]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,})/.test(value);
}

/**
 * What a value is, never what it says: `text`, `a number`, `true or false`, `a list`, `a mapping`,
 * `null`, `nothing`. For a file's top-level value, where the content may be anything at all.
 * @example kindOf('OPENAI_API_KEY=sk-…') // 'text'
 */
export function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number' || typeof value === 'bigint') return 'a number';
  if (typeof value === 'boolean') return 'true or false';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/**
 * What JSON.parse objected to, without the excerpt of the input V8 puts in its message (for a
 * short line it quotes the whole line: `"OPENAI_API_KEY=sk-…" is not valid JSON`).
 * @example jsonSyntaxProblem(new SyntaxError(`Unexpected token 'O', "OPENAI_API"... is not valid JSON`)) // "unexpected character 'O' at the start"
 */
export function jsonSyntaxProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const position = /\bat position (\d+)/.exec(message)?.[1];
  const where = position === undefined ? '' : ` at character ${Number(position) + 1}`;
  if (/^Unexpected end of JSON input/.test(message)) return 'the JSON ends too early';
  const token = /^Unexpected token '(.)', "/su.exec(message)?.[1];
  if (token !== undefined) return `unexpected character ${JSON.stringify(token)}${where}`;
  // V8's other messages name the problem, then " in JSON at position N"; none of them quotes the input.
  const problem = message.split(/ in JSON\b| is not valid JSON|, "/)[0]!.trim();
  return `${problem.length > 0 && !problem.includes('"') ? problem.charAt(0).toLowerCase() + problem.slice(1) : 'not valid JSON'}${where}`;
}

/** Text that is not text: a NUL byte, or bytes that are not UTF-8 (decoded as U+FFFD). */
export function looksBinary(text: string): boolean {
  return text.includes('\u0000') || text.includes('\uFFFD');
}

function issueError(issues: readonly FileIssue[], cause?: unknown): CampaignFileError {
  return new CampaignFileError(formatIssues(issues), issues, cause === undefined ? undefined : { cause });
}

function readError(file: string, what: string, expected: string, err: unknown): CampaignFileError {
  const code = (err as NodeJS.ErrnoException).code;
  const message =
    code === 'ENOENT'
      ? `no such ${what}; check the path`
      : code === 'EISDIR'
        ? `is a folder; expected ${expected}`
        : code === 'EACCES' || code === 'EPERM'
          ? `the ${what} cannot be read (permission denied); expected ${expected} you can read`
          : `the ${what} cannot be read (${code ?? (err instanceof Error ? err.message : String(err))}); expected ${expected}`;
  return issueError([{ file, path: '', message }], err);
}

/**
 * A named pipe or a device is refused before it is opened: opening a pipe waits for a writer, so
 * `sondage plan` would hang with no message. A folder and a missing file are left to readError.
 */
function checkRegular(file: string, expected: string, info: { isFile(): boolean; isDirectory(): boolean } | undefined): void {
  if (info && !info.isFile() && !info.isDirectory()) throw issueError([{ file, path: '', message: `is not a regular file (a named pipe or a device); expected ${expected}` }]);
}

/**
 * The text without a leading byte-order mark: editors on Windows write one, and every design file
 * reads the same with or without it (a JSONL parser would otherwise see it as a stray character).
 */
function checkedText(file: string, expected: string, text: string): string {
  if (looksBinary(text)) throw issueError([{ file, path: '', message: `is not a text file (it holds binary data); expected ${expected}` }]);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Reads a file the campaign names as UTF-8 text, without a leading byte-order mark. A missing file, a folder, an unreadable file and
 * binary content are each one CampaignFileError that names the file and says what was expected
 * (`expected`: "a YAML file with a stories list"); the content is never quoted.
 * @example const text = await readTextFile('stories.yaml', 'stories file', 'a YAML file with a "stories" list');
 */
export async function readTextFile(file: string, what: string, expected: string): Promise<string> {
  checkRegular(file, expected, await stat(file).catch(() => undefined));
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw readError(file, what, expected, err);
  }
  return checkedText(file, expected, text);
}

/** `readTextFile`, synchronously (loaders that are synchronous themselves). */
export function readTextFileSync(file: string, what: string, expected: string): string {
  checkRegular(file, expected, statSync(file, { throwIfNoEntry: false }));
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw readError(file, what, expected, err);
  }
  return checkedText(file, expected, text);
}

/** YAML syntax errors listed before "… and N more": the first ones locate the mistake. */
const MAX_YAML_ISSUES = 10;

/** A parsed YAML file: its value, and the line of any path inside it. */
export interface YamlFile {
  readonly value: unknown;
  /**
   * The line of the node at `segments`, or of its nearest ancestor that exists (a missing key is
   * reported at the mapping that lacks it); for a key, the key's own line.
   */
  lineOf(segments: readonly PropertyKey[]): number | undefined;
}

/**
 * Parses YAML text. Syntax errors are one CampaignFileError, each as `file: line L, column C:
 * YAML syntax error: …` — without the code frame the parser appends, which quotes the file.
 * @example const { value, lineOf } = parseYamlFile('pairs.yaml', text);
 */
export function parseYamlFile(file: string, text: string): YamlFile {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true });
  if (doc.errors.length > 0) {
    const seen = new Set<string>();
    const issues: FileIssue[] = [];
    for (const e of doc.errors) {
      const pos = e.linePos?.[0];
      // yaml appends " at line L, column C:" and an excerpt; the path carries the position.
      const raw = (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, '');
      // The parser's own stack overflow on deep nesting (100,000 `[`) says nothing a user can act on.
      const message = /call stack/i.test(raw) ? 'nested too deeply (brackets or indentation inside one another beyond what a campaign file needs)' : raw;
      const issue = { file, path: pos ? `line ${pos.line}, column ${pos.col}` : '', message: `invalid YAML: ${message}` };
      // One deep error is reported once per level it unwinds: hundreds of the same line.
      const key = `${issue.path}\n${issue.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      issues.push(issue);
    }
    const shown = issues.slice(0, MAX_YAML_ISSUES);
    if (issues.length > shown.length) shown.push({ file, path: '', message: `… and ${issues.length - shown.length} more YAML errors` });
    throw issueError(shown, doc.errors[0]);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    // Alias expansion beyond the limit, or a cyclic alias: the parser's message quotes no content.
    throw issueError([{ file, path: '', message: `invalid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` }], err);
  }
  return { value, lineOf: (segments) => lineIn(doc, lines, segments) };
}

function lineIn(doc: Document, lines: LineCounter, segments: readonly PropertyKey[]): number | undefined {
  const lineAt = (n: unknown): number | undefined => {
    const range = (n as { range?: [number, number, number] } | null)?.range;
    return range ? lines.linePos(range[0]).line : undefined;
  };
  let node: unknown = doc.contents;
  let line = lineAt(node);
  for (const seg of segments) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === seg);
      if (!pair) break;
      line = lineAt(pair.key) ?? line;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
      if (node === undefined) break;
      line = lineAt(node) ?? line;
    } else break;
  }
  return line;
}

/** Adds ` (line N)` to each issue whose `segments` `lineOf` can place, and sorts them in file order. */
export function withLines<T extends FileIssue & { readonly segments: readonly PropertyKey[] }>(issues: readonly T[], lineOf: YamlFile['lineOf']): T[] {
  return issues
    .map((issue) => ({ issue, line: lineOf(issue.segments) }))
    .sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity))
    .map(({ issue, line }) => (line === undefined ? issue : { ...issue, message: `${issue.message} (line ${line})` }));
}

/**
 * Runs `load` on a file the campaign names in `field` (`design.stories`); a CampaignFileError it
 * throws gains a first line naming the campaign file and the field, so that a wrong path is
 * found where it was written. Its issues are kept as they are.
 * @example await fromField(campaign.file, 'design.stories', () => loadStories(file, languages))
 */
export async function fromField<T>(campaignFile: string, field: string, load: () => T | Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!(err instanceof CampaignFileError)) throw err;
    throw new CampaignFileError(`${campaignFile}: ${field} names a file that cannot be used:\n${err.message}`, err.issues, { cause: err });
  }
}
