/**
 * `sondage analyze --battery <b> --replies …` (DESIGN.md "Users with replies collected elsewhere"):
 * the battery validates rows collected elsewhere and writes them as the campaign tables, and its
 * analysis runs on them exactly as on a run's, writing the same result files.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Battery, ByoImportResult } from '../battery/types.js';
import { SondageError } from '../errors.js';
import { toCsv } from '../report/csv.js';
import { DuckDb } from '../store/DuckDb.js';
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
  /** Called after each stage (benchmarks time them). */
  readonly onStage?: (stage: string) => void;
}

export interface AnalyzeRepliesResult extends ByoImportResult {
  /** The battery's results (its own type). */
  readonly results: unknown;
  /** Its short table for the terminal. */
  readonly table: string;
  readonly tablesDir: string;
}

/**
 * Imports the replies at `opts.replies` with the battery's format and writes into `opts.out` the
 * result files of a run, `import_issues.csv` when rows were rejected, and the converted tables under
 * `tables/` (the campaign layout: `<phase>/<table>/model=…/language=…`), which replace any earlier ones.
 * @example await analyzeReplies(far6, { replies: 'collected/', out: 'results/' })
 */
export async function analyzeReplies(battery: Battery, opts: AnalyzeRepliesOptions): Promise<AnalyzeRepliesResult> {
  if (!battery.byo) throw new SondageError(`battery ${battery.name} takes no replies collected elsewhere`);
  const campaign = opts.campaign ?? 'byo';
  const out = path.resolve(opts.out);
  const tablesDir = path.join(out, 'tables');
  const imported = await battery.byo.importReplies(opts.replies, { tablesDir, campaign });
  opts.onStage?.('import: read, validate, write tables');
  const issuesPath = path.join(out, ISSUES_FILE);
  if (imported.issues.length > 0) await writeFile(issuesPath, toCsv(['file', 'path', 'message'], imported.issues));
  else await rm(issuesPath, { force: true });
  const db = await DuckDb.open();
  try {
    const sources = await localSources(db, (phase, table) => `${tablesDir}/${phase}/${table}/**/*.parquet`, imported.phases, battery.prompts);
    const results = await battery.analysis.run(db, sources, {});
    opts.onStage?.('analysis: SQL stage and estimators');
    for (const [name, content] of battery.analysis.files(results, { campaign, source: path.resolve(opts.replies) })) await writeFile(path.join(out, name), content);
    opts.onStage?.('result files');
    return { ...imported, results, table: battery.analysis.console(results), tablesDir };
  } finally {
    db.close();
  }
}
