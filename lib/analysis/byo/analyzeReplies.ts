/**
 * `sondage analyze --replies`: replies collected elsewhere, validated, converted to the campaign
 * tables and analysed as a run's are (issue 5, item 7; the analysis is seed 000 §3–§7).
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CampaignFileError, formatIssues } from '../../errors.js';
import type { FileIssue } from '../../errors.js';
import { DuckDb } from '../../store/DuckDb.js';
import { ParquetWriter } from '../../store/ParquetWriter.js';
import { analyzeCampaign } from '../analyzeCampaign.js';
import { toCsv } from '../csv.js';
import { writeResults } from '../report.js';
import { findReplyFiles, readReplyChunks } from './load.js';
import { tableBuilder, writeTables } from './tables.js';
import type { BuiltTables } from './tables.js';
import type { AnalyzeRepliesOptions, AnalyzeRepliesResult, ImportResult } from './types.js';
import { RowResolver, unknownColumnsWarning, validateFile } from './validate.js';

/** The file that lists every rejected row (file, row, field, message) beside the results. */
export const ISSUES_FILE = 'import_issues.csv';

/**
 * Reads and validates every replies file at `target` and builds the tables' rows. Row problems
 * reject the row only (each is listed); a file that cannot be read, or no valid row at all, is a
 * CampaignFileError.
 */
export async function importReplies(target: string, campaign = 'byo'): Promise<ImportResult & { tables: BuiltTables }> {
  const files = await findReplyFiles(target);
  const issues: FileIssue[] = [];
  const warnings: string[] = [];
  const resolver = new RowResolver();
  const builder = tableBuilder(campaign);
  let total = 0;
  let accepted = 0;
  const db = await DuckDb.open();
  try {
    // One chunk of one file at a time, each row straight into the tables: raw records are freed
    // once validated, and no other copy of the rows is kept.
    for (const file of files) {
      const unknown = new Set<string>();
      for await (const raw of readReplyChunks(db, file)) {
        total += raw.records.length;
        const v = validateFile(raw, (row) => {
          const resolved = resolver.add(row);
          if (resolved) {
            builder.add(resolved);
            accepted++;
          }
        });
        // Loops, not push(...issues): a spread of a million entries overflows the call stack.
        for (const issue of v.issues) issues.push(issue);
        for (const c of v.unknownColumns) unknown.add(c);
      }
      warnings.push(...unknownColumnsWarning(file, [...unknown].sort()));
    }
  } finally {
    db.close();
  }
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
  const tables = builder.finish();
  const rejectedRows = new Set(issues.map((i) => `${i.file}\u0000${i.path.replace(/, field .*$/, '')}`)).size;
  return {
    tables,
    issues,
    warnings,
    summary: {
      files: files.length,
      rows: total,
      accepted,
      rejected: rejectedRows,
      readingsGiven: tables.readingsGiven,
      readingsComputed: tables.readingsComputed,
    },
  };
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
  // The rows live only inside this call: the analysis reads them back from disk, so they can be freed.
  const imported = await importAndWrite(opts.replies, campaign, out, tablesDir);
  const issuesPath = path.join(out, ISSUES_FILE);
  if (imported.issues.length > 0) {
    await writeFile(issuesPath, toCsv(['file', 'path', 'message'], imported.issues));
  } else {
    await rm(issuesPath, { force: true });
  }
  const db = await DuckDb.open();
  try {
    for (const table of ['prompts', 'replies', 'readings'] as const) {
      await db.attachTable(table, `${tablesDir}/${table}/**/*.parquet`, table);
    }
    const analysis = await analyzeCampaign(db, { prompts: 'prompts', replies: 'replies', readings: 'readings' });
    await writeResults((name, content) => writeFile(path.join(out, name), content), analysis, { campaign, source: path.resolve(opts.replies) });
    return { summary: imported.summary, issues: imported.issues, warnings: imported.warnings, analysis, tablesDir };
  } finally {
    db.close();
  }
}

/** importReplies, then the tables written to `tablesDir`; returns what is reported, not the rows. */
async function importAndWrite(replies: string, campaign: string, out: string, tablesDir: string): Promise<ImportResult> {
  const { tables, ...imported } = await importReplies(replies, campaign);
  await mkdir(out, { recursive: true });
  // Written beside, then swapped in: a failed import never leaves half a table set mixed with an old one.
  const staging = path.join(out, `.tables-${process.pid}-${Date.now()}`);
  const writer = await ParquetWriter.create();
  try {
    await writeTables(writer, staging, tables, campaign);
    await rm(tablesDir, { recursive: true, force: true });
    await rename(staging, tablesDir);
  } finally {
    await writer.close();
    await rm(staging, { recursive: true, force: true });
  }
  return imported;
}

/** The row number in an issue's path (`row 12, field …`), for sorting issues in file order. */
function rowNumber(issue: FileIssue): number {
  return Number(/^row (\d+)/.exec(issue.path)?.[1] ?? 0);
}
