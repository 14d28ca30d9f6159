/**
 * `sondage analyze --battery <b> --replies …` (DESIGN.md "Users with replies collected elsewhere"):
 * the battery validates rows collected elsewhere and either writes them as the campaign tables,
 * analysed exactly as a run's (FAR-6), or hands them to its estimators directly (X-Value verdicts,
 * P(True) rows); either way the result files are those of a run.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isBadRow, issuesCsv, issueKindOf } from '../battery/byoIssues.js';
import type { ByoIssue } from '../battery/byoIssues.js';
import type { Battery, BootstrapSettings, ByoReadResult, ByoSpec } from '../battery/types.js';
import { CampaignFileError, SondageError } from '../errors.js';
import { CSV_DECIMALS, withFullPrecision } from '../report/csv.js';
import { DuckDb } from '../store/DuckDb.js';
import { KeptSubqueries } from '../store/keptSubqueries.js';
import { prepareOutDir } from '../store/dataDir.js';
import { localSources } from './localSources.js';

/** The file that lists every problem (file, location, field, kind, message) beside the results. */
export const ISSUES_FILE = 'import_issues.csv';

/** What an import used and found: written beside the results, refused or not. */
export const MANIFEST_FILE = 'byo_manifest.json';


export interface AnalyzeRepliesOptions {
  /** A replies file, or a folder of them. */
  readonly replies: string;
  /** Where the result files, `import_issues.csv`, `byo_manifest.json` and the converted tables (`tables/`) go. */
  readonly out: string;
  /** Campaign name written into the rows (default `byo`). */
  readonly campaign?: string;
  /** Other files the battery's rows need, by name (`--input name=path`; ByoSpec.inputs). */
  readonly inputs?: Readonly<Record<string, string>>;
  /**
   * Leave bad rows out and analyse the rest (`--drop-bad-rows`). By default a file with a bad row
   * is refused: nothing is analysed, every problem is listed.
   */
  readonly dropBadRows?: boolean;
  /** Numbers in the result CSVs at full precision instead of CSV_DECIMALS decimals (`--full-precision`). */
  readonly fullPrecision?: boolean;
  /** Bootstrap draws and seed (`--draws`, `--seed`), over the battery's defaults (ByoSpec.settings). */
  readonly bootstrap?: BootstrapSettings;
  /** Called after each stage (benchmarks time them). */
  readonly onStage?: (stage: string) => void;
}

export interface AnalyzeRepliesResult extends ByoReadResult {
  /** Whether the input was refused: then no result file is written (import_issues.csv says why). */
  readonly refused: boolean;
  /** The battery's results (its own type); undefined when refused. */
  readonly results: unknown;
  /** Its short table for the terminal ('' when refused). */
  readonly table: string;
  /** Where the converted tables went (batteries whose rows become tables). */
  readonly tablesDir?: string;
  /** The settings the analysis used (draws, seed), as written in byo_manifest.json. */
  readonly settings: Readonly<Record<string, number>>;
}

/** Removes the result files an earlier import listed in its manifest (and only those). */
async function removeEarlierResults(out: string): Promise<void> {
  let files: unknown;
  try {
    files = (JSON.parse(await readFile(path.join(out, MANIFEST_FILE), 'utf8')) as { files?: unknown }).files;
  } catch {
    return;
  }
  if (!Array.isArray(files)) return;
  for (const name of files) {
    // Names as written (`a.csv`, `figures/x.svg`), never a path out of the folder.
    if (typeof name !== 'string' || name.split('/').some((p) => p === '..' || p === '') || path.isAbsolute(name)) continue;
    await rm(path.join(out, ...name.split('/')), { force: true });
  }
}

/** The `--input` files checked against what the battery declares, as absolute paths. */
export function checkInputs(battery: Battery, byo: ByoSpec, given: Readonly<Record<string, string>> = {}): Record<string, string> {
  const declared = byo.inputs ?? {};
  const problems: string[] = [];
  for (const name of Object.keys(given)) {
    if (!(name in declared)) problems.push(`--input ${name}: battery ${battery.name} takes ${Object.keys(declared).length > 0 ? `only ${Object.keys(declared).join(', ')}` : 'no other input'}`);
  }
  for (const [name, spec] of Object.entries(declared)) {
    if (spec.required && given[name] === undefined) problems.push(`--input ${name}=FILE is required: ${spec.description}`);
  }
  if (problems.length > 0) throw new SondageError(`sondage analyze --battery ${battery.name}: ${problems.join('; ')}`);
  return Object.fromEntries(Object.entries(given).map(([k, v]) => [k, path.resolve(v)]));
}

/** The settings the analysis will use: those given over the battery's; given ones a battery cannot take are an error. */
export function checkSettings(battery: Battery, byo: ByoSpec, given: BootstrapSettings = {}): Readonly<Record<string, number>> {
  const named = Object.entries(given).filter(([, v]) => v !== undefined);
  if (!byo.settings) {
    if (named.length > 0) throw new SondageError(`sondage analyze --battery ${battery.name}: ${named.map(([k]) => `--${k}`).join(', ')}: its analysis has no bootstrap, so no draws or seed to set`);
    return {};
  }
  const min = byo.settings.minDraws;
  for (const [k, v] of named) {
    if (!Number.isSafeInteger(v) || (k === 'draws' && (v as number) < min)) throw new SondageError(`sondage analyze --battery ${battery.name}: --${k} expected ${k === 'draws' ? `a whole number of draws, ${min} or more` : 'an integer'}, got ${String(v)}`);
  }
  return { draws: given.draws ?? byo.settings.draws, seed: given.seed ?? byo.settings.seed };
}

/**
 * Reads the replies at `opts.replies` in the battery's format and writes into `opts.out` the
 * result files of a run, `import_issues.csv` listing every problem (also when the input is
 * refused), and `byo_manifest.json` (the rule, the settings used, the counts, the CSV precision).
 * One rule for every battery: a bad row refuses the input unless `dropBadRows`; cells missing
 * against the design the rows claim are listed as notices and refuse nothing. Batteries whose rows
 * become tables (FAR-6) also leave them under `tables/` (the campaign layout:
 * `<phase>/<table>/model=…/language=…`), replacing any earlier ones.
 * @example await analyzeReplies(batteryNamed(name)!, { replies: 'collected/', out: 'results/' })
 */
export async function analyzeReplies(battery: Battery, opts: AnalyzeRepliesOptions): Promise<AnalyzeRepliesResult> {
  const byo = battery.byo;
  if (!byo) throw new SondageError(`battery ${battery.name} takes no replies collected elsewhere`);
  const inputs = checkInputs(battery, byo, opts.inputs);
  const settings = checkSettings(battery, byo, opts.bootstrap);
  const bootstrap: BootstrapSettings = { ...(settings['draws'] !== undefined ? { draws: settings['draws'] } : {}), ...(settings['seed'] !== undefined ? { seed: settings['seed'] } : {}) };
  const campaign = opts.campaign ?? 'byo';
  const dropBadRows = opts.dropBadRows ?? false;
  // A file, a read-only folder, /proc: said before any row is read.
  const out = await prepareOutDir(opts.out, '--out');
  // The result files an earlier import wrote here go first: a refused input never leaves results
  // beside its import_issues.csv that look like its own.
  await removeEarlierResults(out);
  const written: string[] = [];
  const finish = async (read: ByoReadResult, refused: boolean): Promise<void> => {
    const issuesPath = path.join(out, ISSUES_FILE);
    if (read.issues.length > 0) await writeFile(issuesPath, issuesCsv(read.issues));
    else await rm(issuesPath, { force: true });
    const kinds: Record<string, number> = {};
    for (const i of read.issues) kinds[issueKindOf(i)] = (kinds[issueKindOf(i)] ?? 0) + 1;
    const manifest = {
      battery: battery.name,
      replies: shownSource(opts.replies),
      outcome: refused ? 'refused' : 'analysed',
      bad_rows: dropBadRows ? 'dropped (--drop-bad-rows)' : 'refuse the input',
      settings,
      counts: read.summary,
      issues: kinds,
      csv_precision: opts.fullPrecision ? 'numbers in the result CSVs at full precision (--full-precision)' : `numbers in the result CSVs are rounded to ${CSV_DECIMALS} decimals`,
      files: written,
    };
    await writeFile(path.join(out, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  };
  /** What an input that is refused comes back as: its issues and counts, no results. */
  const refusedResult = <T extends ByoReadResult>(read: T, more: { tablesDir?: string } = {}) => ({ ...read, refused: true, results: undefined, table: '', settings, ...more });
  const refusal = async (err: unknown): Promise<AnalyzeRepliesResult> => {
    // The input cannot be read at all, or holds no usable row: listed like any other problem.
    if (!(err instanceof CampaignFileError)) throw err;
    const issues: ByoIssue[] = err.issues.length > 0 ? [...err.issues] : [{ file: path.resolve(opts.replies), path: '', message: err.message, kind: 'unreadable' }];
    const read: ByoReadResult = { issues, warnings: [], summary: { accepted: 0 } };
    await finish(read, true);
    return refusedResult(read);
  };
  /** Runs one of the battery's readers; an input it cannot read at all comes back as the refusal to return. */
  const attempt = async <T>(reader: () => Promise<T>, stage: string): Promise<{ read: T } | { refusal: AnalyzeRepliesResult }> => {
    let read: T;
    try {
      read = await reader();
    } catch (err) {
      return { refusal: await refusal(err) };
    }
    opts.onStage?.(stage);
    return { read };
  };
  const isRefused = (read: ByoReadResult): boolean => (!dropBadRows && read.issues.some(isBadRow)) || read.summary['accepted'] === 0;
  const writeResults = async (results: unknown): Promise<void> => {
    const make = () => battery.analysis.files(results, { campaign, source: shownSource(opts.replies) });
    for (const [name, content] of opts.fullPrecision ? withFullPrecision(make) : make()) {
      const file = path.join(out, ...name.split('/'));
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
      written.push(name);
    }
    opts.onStage?.('result files');
  };
  if (byo.kind === 'rows') {
    const analysed = await attempt(() => byo.analyzeRows(opts.replies, { campaign, inputs, dropBadRows, bootstrap }), 'read, validate, analyse');
    if ('refusal' in analysed) return analysed.refusal;
    const { read } = analysed;
    if (isRefused(read) || read.results === undefined) {
      await finish(read, true);
      return refusedResult(read);
    }
    await writeResults(read.results);
    await finish(read, false);
    return { ...read, refused: false, table: battery.analysis.console(read.results), settings };
  }
  const tablesDir = path.join(out, 'tables');
  const importing = await attempt(() => byo.importReplies(opts.replies, { tablesDir, campaign, inputs, dropBadRows }), 'import: read, validate, write tables');
  if ('refusal' in importing) return importing.refusal;
  const imported = importing.read;
  if (isRefused(imported)) {
    await finish(imported, true);
    return refusedResult(imported, { tablesDir });
  }
  const db = await DuckDb.open();
  try {
    const sources = await localSources(db, (phase, table) => `${tablesDir}/${phase}/${table}/**/*.parquet`, imported.phases, battery.prompts);
    const kept = new KeptSubqueries(db);
    const results = await battery.analysis.run(kept, sources, { bootstrap });
    await kept.drop();
    opts.onStage?.('analysis: SQL stage and estimators');
    await writeResults(results);
    await finish(imported, false);
    return { ...imported, refused: false, results, table: battery.analysis.console(results), tablesDir, settings };
  } finally {
    db.close();
  }
}

/** The replies as the summary names them: a relative path as given, an absolute one by its last segment (no local folder in a file meant to be sent). */
function shownSource(replies: string): string {
  return path.isAbsolute(replies) ? path.basename(replies) : replies;
}
