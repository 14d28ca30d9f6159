import type { FileIssue } from '../../errors.js';
import type { AnalysisResults } from '../types.js';
import type { ByoRow } from './schema.js';

export type ByoFormat = 'jsonl' | 'json' | 'csv' | 'parquet';

/** One input file as read: its records, in file order, before validation. */
export interface RawFile {
  readonly file: string;
  readonly format: ByoFormat;
  readonly records: readonly unknown[];
  /** Record number of `records[0]` within the file (1-based; default 1): files are read in chunks. */
  readonly firstRow?: number;
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

export interface ImportResult {
  readonly summary: ImportSummary;
  /** Row-level problems: each names the file, the row and the field; the row is left out. */
  readonly issues: readonly FileIssue[];
  /** File-level notes that reject nothing (columns the schema does not know). */
  readonly warnings: readonly string[];
}

export interface AnalyzeRepliesOptions {
  /** A file or a folder (searched recursively for .jsonl, .ndjson, .json, .csv, .parquet). */
  readonly replies: string;
  /** Where the results files and the converted tables (`tables/`) go. */
  readonly out: string;
  /** The campaign name in the tables and the summary (default `byo`). */
  readonly campaign?: string;
}

export interface AnalyzeRepliesResult extends ImportResult {
  readonly analysis: AnalysisResults;
  /** The hive-layout folder holding prompts/, replies/ and readings/. */
  readonly tablesDir: string;
}
