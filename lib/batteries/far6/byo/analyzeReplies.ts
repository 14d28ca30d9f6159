/**
 * `sondage analyze --replies`: replies collected elsewhere, validated, converted to the campaign
 * tables and analysed as a run's are (the analysis is Same Judgment, Different Yes §3–§7).
 */
import { mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CampaignFileError, codedSource, DuckDb, formatIssues, tableColumns, toCsv } from '../../../api/battery.js';
import type { ByoIssue, FileIssue } from '../../../api/battery.js';
import { FAR6_PROMPT_COLUMNS } from '../promptColumns.js';
import { analyzeCampaign } from '../analysis/analyzeCampaign.js';
import { writeResults } from '../report/report.js';
import { findReplyFiles, formatOf, readReplyChunks } from './load.js';
import { ImportThreads, importThreadCount } from './importThreads.js';
import { RowStager } from './rowStager.js';
import type { FileNotes } from './rowStager.js';
import { TableSink } from './tables.js';
import type { AnalyzeRepliesOptions, AnalyzeRepliesResult, ImportOptions, ImportResult } from './types.js';
import { unknownColumnsWarning, noLettersWarning } from './validate.js';

/** The file that lists every rejected row (file, row, field, message) beside the results. */
export const ISSUES_FILE = 'import_issues.csv';

/** Characters of table lines buffered before they are appended to the staging files. */
const FLUSH_CHARS = 4 * 1024 * 1024;

/**
 * Reads and validates every replies file at `target` and writes the three tables under
 * `opts.tablesDir` (hive layout; replacing any earlier ones). Rows stream through: each chunk of a
 * file is validated, its valid rows become table lines at once, and the lines go to per-partition
 * staging files, so no copy of the rows is held (only each item's ids, for the checks across rows).
 * A large JSONL file is parsed and prepared by threads (importThreads.ts), its rows checked across
 * and staged here in file order, with the same issues and errors as in process.
 * Row problems reject the row only (each is listed); a file that cannot be read, or no valid row
 * at all, is a CampaignFileError and leaves `tablesDir` as it was.
 * @example const { summary, issues } = await importReplies('collected/', { tablesDir: 'results/tables' })
 */
export async function importReplies(target: string, opts: ImportOptions): Promise<ImportResult> {
  const campaign = opts.campaign ?? 'byo';
  const files = await findReplyFiles(target);
  const tablesDir = path.resolve(opts.tablesDir);
  await mkdir(path.dirname(tablesDir), { recursive: true });
  // Staged beside the target, then swapped in: a failed import never leaves half a table set mixed with an old one.
  const stage = await mkdtemp(path.join(path.dirname(tablesDir), '.import-'));
  const warnings: string[] = [];
  const sink = new TableSink(stage, campaign);
  const stager = new RowStager(sink);
  const { issues, resolver } = stager;
  const flushChars = opts.flushChars ?? FLUSH_CHARS;
  // Large JSONL files are parsed and prepared by threads (importThreads.ts); the rest in process.
  const sizes = await Promise.all(files.map(async (f) => (formatOf(f) === 'jsonl' ? (await stat(f)).size : 0)));
  const threadCount = importThreadCount(sizes.reduce((a, b) => Math.max(a, b), 0), opts.threads);
  let threads: ImportThreads | undefined;
  try {
    // Threads only make it faster: where they cannot start (code bundled without their entry file),
    // the import runs in process — unless they were asked for (tests), where that would hide a fault.
    if (threadCount > 0) {
      threads = await ImportThreads.start(threadCount).catch((err: unknown) => {
        if (opts.threads !== undefined) throw err;
        return undefined;
      });
    }
    for (const [f, file] of files.entries()) {
      const notes: FileNotes = { unknown: new Set<string>(), labelsWithoutLetters: 0 };
      const size = sizes[f] as number;
      if (threads && size > 0) {
        let rows = 0;
        let lines = 0;
        for await (const packed of threads.packed(file, size, opts.segmentBytes)) {
          stager.stagePacked(file, packed, rows, lines, notes);
          rows += packed.records;
          lines += packed.lines;
          if (sink.bufferedChars >= flushChars) await sink.flush();
        }
      } else {
        for await (const raw of readReplyChunks(file, opts.chunkRows)) {
          stager.stageChunk(raw, notes);
          if (sink.bufferedChars >= flushChars) await sink.flush();
        }
      }
      warnings.push(...unknownColumnsWarning(file, [...notes.unknown].sort()), ...noLettersWarning(file, notes.labelsWithoutLetters));
    }
    await threads?.close();
    threads = undefined;
    const total = stager.total;
    const accepted = stager.accepted;
    for (const issue of resolver.issues) issues.push(issue);
    issues.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : rowNumber(a) - rowNumber(b)));
    if (accepted === 0) {
      const shown = issues.slice(0, 20);
      throw new CampaignFileError(
        `${target}: no valid reply row in ${files.length} file${files.length === 1 ? '' : 's'} (${total} rows read)` +
          (shown.length > 0 ? `\n${formatIssues(shown)}${issues.length > shown.length ? `\n… and ${issues.length - shown.length} more` : ''}` : ''),
        issues,
      );
    }
    // The campaign layout (<phase>/<table>/model=…/language=…): the rows stand for FAR-6's generate phase.
    const written = await sink.finish(path.join(stage, 'tables', 'generate'), resolver.retriedItems());
    await rm(tablesDir, { recursive: true, force: true });
    await rename(path.join(stage, 'tables'), tablesDir);
    const rejectedRows = new Set(issues.map((i) => `${i.file}\u0000${i.path.replace(/, field .*$/, '')}`)).size;
    return {
      issues,
      missingCells: resolver.missingCells().map((m) => missingCellNotice(target, m)),
      warnings,
      partitions: written.partitions,
      summary: {
        files: files.length,
        rows: total,
        accepted,
        rejected: rejectedRows,
        readingsGiven: written.readingsGiven,
        readingsComputed: written.readingsComputed,
      },
    };
  } finally {
    await threads?.close();
    await rm(stage, { recursive: true, force: true });
  }
}

/**
 * Imports the replies at `opts.replies` and writes into `opts.out` the results files of a run
 * (story_scores.csv, … summary.md), `import_issues.csv` when rows were rejected, and the converted
 * tables under `tables/` (prompts, replies, readings; hive layout), which replace any earlier ones.
 * @example await analyzeReplies({ replies: 'collected/', out: 'results/' })
 */
export async function analyzeReplies(opts: AnalyzeRepliesOptions): Promise<AnalyzeRepliesResult> {
  const campaign = opts.campaign ?? 'byo';
  const out = path.resolve(opts.out);
  const tablesDir = path.join(out, 'tables');
  const imported = await importReplies(opts.replies, { tablesDir, campaign });
  opts.onStage?.('import: read, validate, write tables');
  const issuesPath = path.join(out, ISSUES_FILE);
  if (imported.issues.length > 0) {
    await writeFile(issuesPath, toCsv(['file', 'path', 'message'], imported.issues));
  } else {
    await rm(issuesPath, { force: true });
  }
  const db = await DuckDb.open();
  try {
    for (const table of ['prompts', 'replies', 'readings'] as const) {
      await db.attachTable(table, `${tablesDir}/${table}/**/*.parquet`, table, tableColumns(table, FAR6_PROMPT_COLUMNS));
    }
    // The text factors as ENUMs, as `sondage analyze` reads a campaign's (lib/analysis/localSources.ts).
    const factors = FAR6_PROMPT_COLUMNS.factors.filter((c) => c.type === 'VARCHAR').map((c) => c.name);
    const prompts = codedSource('prompts', await db.levelTypes('prompts', factors));
    const analysis = await analyzeCampaign(db, { prompts, replies: 'replies', readings: 'readings' });
    opts.onStage?.('analysis: SQL stage and estimators');
    await writeResults((name, content) => writeFile(path.join(out, name), content), analysis, { campaign, source: path.resolve(opts.replies) });
    opts.onStage?.('result files');
    return { summary: imported.summary, issues: imported.issues, missingCells: imported.missingCells, warnings: imported.warnings, partitions: imported.partitions, analysis, tablesDir };
  } finally {
    db.close();
  }
}

const UNIT_FIELDS = ['story', 'form', 'constraint', 'named', 'option_order'] as const;

/** A model's item with no row in one of the model's languages, as a notice naming the item and the languages. */
function missingCellNotice(target: string, m: { group: string; unit: string; missing: string[]; present: string[] }): ByoIssue {
  const values = m.unit.split('\u0000');
  const item = UNIT_FIELDS.map((f, i) => `${f} ${values[i]}`).join(', ');
  return { file: target, path: '', kind: 'missing cell', message: `model ${m.group}: ${item} has no row in ${m.missing.join(', ')} (the model has rows in ${m.present.join(', ')})` };
}

/** The row number in an issue's path (`row 12, field …`), for sorting issues in file order. */
function rowNumber(issue: FileIssue): number {
  return Number(/^row (\d+)/.exec(issue.path)?.[1] ?? 0);
}
