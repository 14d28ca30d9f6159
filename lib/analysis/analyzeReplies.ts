/**
 * `sondage analyze --battery <b> --replies …` (DESIGN.md "Users with replies collected elsewhere"):
 * the battery validates rows collected elsewhere and either writes them as the campaign tables,
 * analysed exactly as a run's (FAR-6), or hands them to its estimators directly (X-Value verdicts,
 * P(True) rows); either way the result files are those of a run.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Battery, ByoReadResult, ByoSpec } from '../battery/types.js';
import { SondageError } from '../errors.js';
import { toCsv } from '../report/csv.js';
import { DuckDb } from '../store/DuckDb.js';
import { prepareOutDir } from '../store/dataDir.js';
import { localSources } from './localSources.js';

/** The file that lists every rejected row (file, row, field, message) beside the results. */
export const ISSUES_FILE = 'import_issues.csv';

export interface AnalyzeRepliesOptions {
  /** A replies file, or a folder of them. */
  readonly replies: string;
  /** Where the result files, `import_issues.csv` and the converted tables (`tables/`) go. */
  readonly out: string;
  /** Campaign name written into the rows (default `byo`). */
  readonly campaign?: string;
  /** Other files the battery's rows need, by name (`--input name=path`; ByoSpec.inputs). */
  readonly inputs?: Readonly<Record<string, string>>;
  /** Called after each stage (benchmarks time them). */
  readonly onStage?: (stage: string) => void;
}

export interface AnalyzeRepliesResult extends ByoReadResult {
  /** The battery's results (its own type). */
  readonly results: unknown;
  /** Its short table for the terminal. */
  readonly table: string;
  /** Where the converted tables went (batteries whose rows become tables). */
  readonly tablesDir?: string;
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

/**
 * Reads the replies at `opts.replies` in the battery's format and writes into `opts.out` the
 * result files of a run and `import_issues.csv` when rows were rejected. Batteries whose rows
 * become tables (FAR-6) also leave them under `tables/` (the campaign layout:
 * `<phase>/<table>/model=…/language=…`), replacing any earlier ones; the others' estimators read
 * the rows directly.
 * @example await analyzeReplies(batteryNamed(name)!, { replies: 'collected/', out: 'results/' })
 */
export async function analyzeReplies(battery: Battery, opts: AnalyzeRepliesOptions): Promise<AnalyzeRepliesResult> {
  const byo = battery.byo;
  if (!byo) throw new SondageError(`battery ${battery.name} takes no replies collected elsewhere`);
  const inputs = checkInputs(battery, byo, opts.inputs);
  const campaign = opts.campaign ?? 'byo';
  // A file, a read-only folder, /proc: said before any row is read.
  const out = await prepareOutDir(opts.out, '--out');
  const writeIssues = async (read: ByoReadResult): Promise<void> => {
    const issuesPath = path.join(out, ISSUES_FILE);
    if (read.issues.length > 0) await writeFile(issuesPath, toCsv(['file', 'path', 'message'], read.issues));
    else await rm(issuesPath, { force: true });
  };
  const writeResults = async (results: unknown): Promise<void> => {
    for (const [name, content] of battery.analysis.files(results, { campaign, source: shownSource(opts.replies) })) {
      const file = path.join(out, ...name.split('/'));
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
    }
    opts.onStage?.('result files');
  };
  if (byo.kind === 'rows') {
    const read = await byo.analyzeRows(opts.replies, { campaign, inputs });
    opts.onStage?.('read, validate, analyse');
    await writeIssues(read);
    await writeResults(read.results);
    return { ...read, table: battery.analysis.console(read.results) };
  }
  const tablesDir = path.join(out, 'tables');
  const imported = await byo.importReplies(opts.replies, { tablesDir, campaign, inputs });
  opts.onStage?.('import: read, validate, write tables');
  await writeIssues(imported);
  const db = await DuckDb.open();
  try {
    const sources = await localSources(db, (phase, table) => `${tablesDir}/${phase}/${table}/**/*.parquet`, imported.phases, battery.prompts);
    const results = await battery.analysis.run(db, sources, {});
    opts.onStage?.('analysis: SQL stage and estimators');
    await writeResults(results);
    return { ...imported, results, table: battery.analysis.console(results), tablesDir };
  } finally {
    db.close();
  }
}

/** The replies as the summary names them: a relative path as given, an absolute one by its last segment (no local folder in a file meant to be sent). */
function shownSource(replies: string): string {
  return path.isAbsolute(replies) ? path.basename(replies) : replies;
}
