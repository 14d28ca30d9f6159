/**
 * What the viewer (`sondage view`) shows, and the one interface it reads it through.
 *
 * The server and the page speak only `ViewSource`. `LocalViewSource` answers it from a local data
 * folder (DuckDB over the Parquet parts, the embedded ledger through `sondage status`'s code). An
 * AWS campaign can be viewed later by a second implementation — Athena over the same layout in S3,
 * with the bytes each page scanned in `ReplyPage.scannedBytes` — without changing the viewer.
 */
import type { ReplySelection } from '../battery/types.js';

export type { ReplySelection };

/** One campaign of the data folder, as the overview lists it. */
export interface CampaignSummary {
  readonly name: string;
  /** From the campaign's plan (`plan.json`); undefined before a run planned it. */
  readonly battery?: string;
  readonly phases: readonly string[];
  readonly budgetUsd?: number;
  /** Result tables the analysis wrote (CSV file names). */
  readonly tables: readonly string[];
  /** Whether a run holds the campaign's lock now. */
  readonly running: boolean;
}

/**
 * Progress as `sondage status` gathers it (lib/cli/commands/status.ts CampaignStatus has this
 * shape): the viewer is handed it, so there is one way of reading a campaign's progress.
 */
export interface CampaignProgress {
  readonly run: string;
  readonly phases: readonly {
    readonly phase: string;
    readonly done: number;
    readonly failed: number;
    readonly inFlight: number;
    readonly pending: number;
    readonly planned?: number;
    readonly estimated?: boolean;
  }[];
  readonly budget?: { readonly cap_usd: number; readonly spent_usd: number; readonly reserved_usd: number; readonly possibly_billed_usd: number };
  /** The latest failures (a few: the page lists them). */
  readonly failures: readonly { readonly at: string; readonly where: string; readonly error: string; readonly cause: string }[];
  readonly failuresTotal: number;
  /** Every failure counted by its error class; computed from `failures` when absent. */
  readonly failuresByKind?: Readonly<Record<string, number>>;
}

/** Reads a campaign's progress; the CLI passes `sondage status`'s own reader. */
export type ProgressReader = (campaign: string) => Promise<CampaignProgress | undefined>;

/** Stored replies per phase, model and language, and how fast they arrived. */
export interface ReplyCounts {
  readonly rows: readonly {
    readonly phase: string;
    readonly model: string;
    readonly language: string;
    readonly replies: number;
    readonly ok: number;
    readonly costUsd: number;
  }[];
  /** Replies stored in the last five minutes, per minute. */
  readonly recentPerMinute: number;
  /** Replies per minute between the first and the last stored reply. */
  readonly overallPerMinute: number;
  readonly firstAt?: string;
  readonly lastAt?: string;
}

/** Everything the overview of one campaign shows. */
export interface CampaignOverview {
  readonly campaign: CampaignSummary;
  readonly counts: ReplyCounts;
  /** Undefined where the campaign never ran here (no ledger). */
  readonly progress?: CampaignProgress;
  /** Failures of the progress, by error class. */
  readonly failuresByKind: Readonly<Record<string, number>>;
}

/** A result table: its columns, its rows (as the CSV gives them) and, per row, whether replies stand behind it. */
export interface ResultTable {
  readonly name: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Rows left out past the limit. */
  readonly truncated: number;
}

/** A query for a page of replies: a selection, a full-text search, a page. */
export interface ReplyQuery extends Partial<ReplySelection> {
  /** Case-insensitive substring of the reply text. */
  readonly search?: string;
  readonly offset?: number;
  readonly limit?: number;
  /** Where the page starts, as the previous page's `next` gave it (then `offset` only numbers the rows). */
  readonly cursor?: string;
}

/** One reply as a page lists it (text cut short). */
export interface ReplyListRow {
  readonly item_id: string;
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  readonly attempt: number;
  readonly status: string;
  readonly cost_usd: number;
  readonly text: string | null;
  readonly error_class: string | null;
  /** `reader[/facet]=label` of each reading, for the list. */
  readonly readings: string;
}

export interface ReplyPage {
  readonly rows: readonly ReplyListRow[];
  readonly offset: number;
  readonly limit: number;
  /** Whether a next page exists. */
  readonly more: boolean;
  /** The cursor of the next page, where this page was read partition by partition. */
  readonly next?: string;
  /** Milliseconds the queries took. */
  readonly ms: number;
  /** Bytes the query scanned, where the backend reports it (Athena); undefined locally. */
  readonly scannedBytes?: number;
}

export interface Reading {
  readonly phase: string;
  readonly reader: string;
  readonly facet: string | null;
  readonly label: string;
  readonly value: number | null;
  readonly raw: string | null;
  /** The judge's own reply (its item id), for a judge's reading. */
  readonly judge_item_id: string | null;
}

/** One reply in full: the prompt, every attempt, every reading. */
export interface ReplyDetail {
  readonly item_id: string;
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  /** The battery's prompt columns (factors, extras) of the item. */
  readonly prompt: Readonly<Record<string, string | number | boolean | null>>;
  readonly messages: readonly { readonly role: string; readonly content: string }[];
  readonly attempts: readonly {
    readonly attempt: number;
    readonly status: string;
    readonly text: string | null;
    readonly finish_reason: string | null;
    readonly cost_usd: number;
    readonly input_tokens: number;
    readonly output_tokens: number;
    readonly latency_ms: number;
    readonly logprobs_json: string | null;
    readonly error_class: string | null;
    readonly error_message: string | null;
    readonly provider: string;
    readonly simulated: boolean;
    readonly created_at: string;
  }[];
  readonly readings: readonly Reading[];
  /** The item it was built from (a judge's item: the reply it judged). */
  readonly source_item_id: string | null;
}

/** Values the filters of a campaign can take. */
export interface FilterValues {
  readonly phases: readonly string[];
  readonly models: readonly string[];
  readonly languages: readonly string[];
  readonly readers: readonly string[];
  readonly labels: readonly string[];
}

/**
 * The viewer's data access. Every method is read-only; campaign names are checked against the
 * campaigns the source holds before anything is read.
 */
export interface ViewSource {
  /** Where the data is, for the page header (`local data folder`). */
  readonly description: string;
  campaigns(): Promise<readonly CampaignSummary[]>;
  overview(campaign: string): Promise<CampaignOverview>;
  table(campaign: string, name: string): Promise<ResultTable>;
  /** The replies behind a cell of a result table (the battery's declaration, else model and language). */
  cellSelection(campaign: string, table: string, row: number, column: string): Promise<ReplySelection | undefined>;
  filters(campaign: string): Promise<FilterValues>;
  replies(campaign: string, query: ReplyQuery): Promise<ReplyPage>;
  /** How many replies the query matches (apart from the page: a count over a million rows costs more than a page). */
  count(campaign: string, query: ReplyQuery): Promise<number>;
  /** One reply in full; `phase` '' looks in every phase; `where` narrows to its partition (faster). */
  reply(campaign: string, phase: string, itemId: string, where?: { readonly model?: string; readonly language?: string }): Promise<ReplyDetail | undefined>;
  close(): Promise<void>;
}
