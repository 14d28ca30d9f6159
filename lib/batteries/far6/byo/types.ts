import type { ByoIssue, FileIssue } from '../../../api/battery.js';
import type { Language } from '../types.js';
import type { AnalysisResults } from '../analysis/types.js';
import type { ByoRow } from './schema.js';

export type ByoFormat = 'jsonl' | 'json' | 'csv' | 'parquet';

/** One input file as read: its records, in file order, before validation. */
export interface RawFile {
  readonly file: string;
  readonly format: ByoFormat;
  readonly records: readonly unknown[];
  /** Record number of `records[0]` within the file (1-based; default 1): files are read in chunks. */
  readonly firstRow?: number;
  /** Lines of this chunk that could not be read as a record (JSONL lines that are not JSON). */
  readonly issues?: readonly FileIssue[];
}

/** A valid row and where it came from (1-based record number within its file). */
export interface SourcedRow {
  readonly file: string;
  readonly row: number;
  readonly value: ByoRow;
}

export interface ImportSummary {
  readonly files: number;
  /** Records read, valid or not. */
  readonly rows: number;
  /** Rows that became replies. */
  readonly accepted: number;
  /** Rows left out, each named in `issues`. */
  readonly rejected: number;
  /** Readings taken from the rows. */
  readonly readingsGiven: number;
  /** Readings computed by the fixed token rule from a reading map. */
  readonly readingsComputed: number;
}

/** Rows written per model × language. */
export interface WrittenPartition {
  readonly model: string;
  readonly language: Language;
  readonly prompts: number;
  readonly replies: number;
  readonly readings: number;
}

export interface ImportOptions {
  /** Where the tables go (prompts/, replies/, readings/ in the hive layout); replaced as a whole. */
  readonly tablesDir: string;
  /** The campaign name in the tables (default `byo`). */
  readonly campaign?: string;
  /** Records per chunk read and validated at a time (default CHUNK_ROWS). */
  readonly chunkRows?: number;
  /** Characters of table lines buffered before they go to the staging files (default 16 Mi). */
  readonly flushChars?: number;
  /**
   * Threads that parse and prepare large JSONL files (importThreads.ts): 0 for none; by default
   * none below 64 MiB of JSONL, else as many as cores (2–4).
   */
  readonly threads?: number;
  /** Bytes of JSONL per segment a thread prepares at a time (default 4 MiB). */
  readonly segmentBytes?: number;
}

export interface ImportResult {
  readonly summary: ImportSummary;
  /** Row-level problems: each names the file, the row and the field; the row is left out. */
  readonly issues: readonly FileIssue[];
  /** Cells of the design the rows claim that hold no row: each model's items missing in one of its languages. */
  readonly missingCells: readonly ByoIssue[];
  /** File-level notes that reject nothing (columns the schema does not know). */
  readonly warnings: readonly string[];
  /** What was written, per model × language. */
  readonly partitions: readonly WrittenPartition[];
}

export interface AnalyzeRepliesOptions {
  /** A file or a folder (searched recursively for .jsonl, .ndjson, .json, .csv, .parquet). */
  readonly replies: string;
  /** Where the results files and the converted tables (`tables/`) go. */
  readonly out: string;
  /** The campaign name in the tables and the summary (default `byo`). */
  readonly campaign?: string;
  /** Called as each stage ends (import, tables, each analysis step), for progress and benchmarks. */
  readonly onStage?: (stage: string) => void;
}

export interface AnalyzeRepliesResult extends ImportResult {
  readonly analysis: AnalysisResults;
  /** The hive-layout folder holding prompts/, replies/ and readings/. */
  readonly tablesDir: string;
}
