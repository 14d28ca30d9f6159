/**
 * The battery contract (DESIGN.md "The flow of one campaign"): what one study — FAR-6, X-Value,
 * P(True) — gives the core so that the core can plan, run, read, store, analyse and report it
 * without knowing it. A battery is one folder, `lib/batteries/<name>/`, whose `index.ts` exports a
 * `Battery` made with `defineBattery`; one line in `lib/batteries/index.ts` registers it.
 *
 * The core owns the loop: it expands each phase of the battery's graph per partition (model under
 * test × language), asks the models under the budget, journals and stores every attempt, reads
 * each reply with the phase's reader, and runs the battery's SQL and estimators on the stored
 * tables, locally (DuckDB) or on AWS (Athena). The battery owns the science: its design schema,
 * its phases, prompts, readers, queries, statistics, report, simulated respondents and the format
 * of replies brought from elsewhere.
 */
import type { z } from 'zod';
import type { GenerationSettings, LanguageCode, PromptItem, TableName } from '../core/types.js';
import type { TokenLogprob } from '../providers/types.js';
import type { SimulatorFactory } from '../providers/simulated/types.js';
import type { Queryable } from '../query/types.js';
import type { SqlLibrary } from '../query/sql.js';
import type { PromptColumns } from '../store/schemas.js';
import type { ByoIssue } from './byoIssues.js';
import type { ReadoutHealth } from './readoutHealth.js';

// ---- what a battery sees of the campaign ----------------------------------------------------

/** A model entry of the campaign as a battery sees it: the model under test, or a role's model. */
export interface ModelRef {
  /** Campaign model id (storage paths, item ids, reader ids such as `judge:<id>`). */
  readonly id: string;
  readonly provider: string;
  /** The provider's own model name. */
  readonly model: string;
  /** Resolved settings (defaults < campaign defaults < the entry's settings), before any phase layer. */
  readonly settings: GenerationSettings;
  /** Simulated models only: the entry's `simulation:` block, as written. */
  readonly simulation?: Readonly<Record<string, unknown>>;
}

/** A role's entry (FAR-6's judge): a model, plus the fields the battery declared for the role. */
export interface RoleEntry extends ModelRef {
  readonly extras: Readonly<Record<string, unknown>>;
}

/** The part of a loaded campaign a battery's code receives. */
export interface CampaignCore {
  readonly name: string;
  readonly seed: number;
  /** Absolute path of the campaign file. */
  readonly file: string;
  /** The campaign file's folder: design paths are relative to it. */
  readonly folder: string;
  /** The models under test, in file order. */
  readonly models: readonly ModelRef[];
  /** The role entries the campaign gives (a role the battery declares and the file leaves out is absent). */
  readonly roles: Readonly<Record<string, RoleEntry>>;
}

// ---- replies and readings --------------------------------------------------------------------

/** One stored reply as a reader or a dependent phase sees it. */
export interface ReplyView {
  readonly text: string | null;
  readonly attempt: number;
  /** First-token log-probabilities by token (exact, or only bounded by the top-k), when asked for. */
  readonly logprobs: Readonly<Record<string, TokenLogprob>> | null;
  readonly finish_reason?: string | null;
}

/**
 * What a reader makes of one reply; the core adds item_id, campaign, phase, model and language.
 * `label` comes from the battery's vocabulary for the reader (and facet), `value` carries a number
 * (P(True) in [0, 1], a 1–5 score), `raw` what the reader matched or the judge's whole output.
 */
export interface ReadingDraft {
  /** `rule` | `rule+` | `judge:<id>` | `parse` | `ptrue` | … */
  readonly reader: string;
  /** One of several things read off one reply (X-Value: nature, scope, A–H, overall); null otherwise. */
  readonly facet?: string | null;
  readonly label: string;
  readonly value?: number | null;
  readonly raw?: string | null;
}

/**
 * Allowed labels per reader, keyed `reader` or `reader#facet`; a key ending in `*` matches every
 * reader with that prefix (`judge:*`). A label outside its list is stored as `invalid` with the
 * reader's label kept in `raw`, so an unknown label never becomes a readout of its own.
 */
export type Vocabulary = Readonly<Record<string, readonly string[]>>;

// ---- the phase graph -------------------------------------------------------------------------

/** An earlier phase a phase consumes, per item of the same partition. */
export interface UpstreamRef {
  readonly phase: string;
  /** Its chosen reply per item (chosen_replies.sql), its readings (one_reading.sql), or both. */
  readonly take: readonly ('reply' | 'readings')[];
  /** Only these readers' readings; a reader ending in `*` is a prefix. Default: all. */
  readonly readers?: readonly string[];
}

/** The outputs of the phases a phase consumes, for one partition. */
export interface Upstream {
  /** The chosen reply of an item of an earlier phase (the lowest ok attempt), if it has one. */
  reply(phase: string, itemId: string): ReplyView | undefined;
  /** The readings of an item stored in an earlier phase's readings folder (one per reader and facet). */
  readings(phase: string, itemId: string): readonly ReadingDraft[];
}

/** A model with the settings it is sent in the phase at hand. */
export interface Answerer {
  readonly id: string;
  readonly settings: GenerationSettings;
}

/** One partition of one phase: the model under test, the language, and who answers. */
export interface PartitionContext {
  readonly campaign: CampaignCore;
  readonly phase: string;
  /** The model under test (partition key of every table). */
  readonly subject: Answerer;
  /** Who answers this phase: the subject, or the role's model; settings resolved for this phase. */
  readonly answerer: Answerer;
  readonly language: LanguageCode;
  /**
   * The items of an earlier phase of this partition, in expansion order (deterministic: re-expanded,
   * never read back). For a `by-source` phase run in shards, its first upstream phase's items are
   * the shard's slice.
   */
  items(phase: string): readonly PromptItem[];
  /**
   * The same items for one pass: expanded as they are read and not kept, unless `items` kept them
   * already. For an estimate that reads an earlier phase once: the plan then holds none of a
   * partition's items (kept while they are priced, a partition's items outlive V8's
   * young-generation collections: in a million-item plan collecting took ~40 % of its time). Each
   * pass expands the phase again.
   */
  each(phase: string): Iterable<PromptItem>;
  /**
   * True when the items are only counted and priced (`sondage plan`, the run's plan): none is
   * stored, asked or written, so an expansion may compute what only those need (FAR-6: the
   * SHA-256 item ids) on first read instead of for every item.
   */
  readonly planning?: boolean;
}

/** Counts and tokens of a phase in one partition before the replies it reads exist (plan, cost). */
export interface PhaseEstimate {
  readonly items: number;
  readonly inputTokens: number;
  /** Expected output tokens (the cost estimate). */
  readonly outputTokens: number;
  /** Input tokens the reservations count (prompt as long as it can get). */
  readonly maxInputTokens: number;
  /** Output tokens the reservations count (max_tokens per call). */
  readonly maxOutputTokens: number;
}

/** One node of a battery's phase graph. */
export interface PhaseSpec {
  /** A safe path segment, unique in the battery (`generate`, `judge`, `step1`, `verify`). */
  readonly name: string;
  /** The phases it consumes; [] for a root phase. Every phase named must come earlier. */
  readonly after: readonly UpstreamRef[];
  /** Who answers: the model under test, or the model of one of the battery's roles. */
  readonly answeredBy: 'subject' | { readonly role: string };
  /** Settings layer of the phase: defaults < campaign defaults < phase < model settings < model phase_settings. */
  readonly settings?: GenerationSettings;
  /**
   * How the AWS plan cuts the phase into shards: slices of the items of its first upstream phase
   * (or of its own items, for a root phase), or one shard per partition (a sample drawn over the
   * whole partition, as FAR-6's judge audit). Default `by-source`.
   */
  readonly shard?: 'by-source' | 'partition';
  /** Which item a reading names: the phase's own item, or its source (FAR-6's judge labels the generate item). Default `self`. */
  readonly readingsOf?: 'self' | 'source';
  /** Where its readings are stored: its own readings folder, or another phase's. Default `self`. */
  readonly readingsFolder?: string;
  /** How the plan names a role's line (`judging`, `auditing`): "judge (judging alpha)". */
  readonly verb?: string;
  /** The items of one partition, deterministic and in a stable order. */
  expand(p: PartitionContext, up: Upstream): Iterable<PromptItem>;
  /** The readings of one successful reply: a pure function of the item and the reply. */
  read(item: PromptItem, reply: ReplyView): readonly ReadingDraft[];
  /**
   * Changes when `read` makes something else of the same item and reply (a new rule, a fixed
   * parser): readings stored under another version are read again from their replies, for free,
   * by the next run or analysis. Changes to the item's `extras` (a gold letter, a reading map) are
   * noticed without it; its `factors` are part of the request, so `item_id` hashes them (a changed
   * factor is a new item, asked anew). Default ''.
   */
  readonly readerVersion?: string;
  /** Root phases: the expected reply length of an item for the cost estimate (default: its max_tokens). */
  expectedOutputTokens?(item: PromptItem): number;
  /** Dependent phases: counts and tokens before the replies exist. Required when `after` is not empty. */
  estimate?(p: PartitionContext): PhaseEstimate;
  /**
   * Dependent `by-source` phases: whether an item of the first upstream phase can yield items here
   * once its reply exists (FAR-6: whether the judge reads it). Lets the plan skip shards and count
   * what is pending before the replies exist. Default: every item.
   */
  consumes?(source: PromptItem): boolean;
}

/** A phase as `sondage batteries` lists it, before any design is loaded. */
export interface PhaseInfo {
  readonly name: string;
  /** `subject` (the model under test) or the role that answers. */
  readonly answeredBy: 'subject' | { readonly role: string };
  /** The phases it consumes. */
  readonly after: readonly string[];
  /** The readers of its replies (`judge:*`: one per judge model). */
  readonly readers: readonly string[];
  /** One line: what it asks, with the paper section. */
  readonly description: string;
  /** Whether only some designs have it (FAR-6's audit, X-Value's rubric steps). */
  readonly optional?: boolean;
}

// ---- the campaign file -----------------------------------------------------------------------

/** A role a battery declares (FAR-6: judge, second_judge; P(True): an optional judge). */
export interface RoleSpec {
  readonly required: boolean;
  /** One line for `sondage batteries`. */
  readonly description: string;
  /** Where the entry sits in the campaign file; default `[<role>]` at the root. */
  readonly at?: readonly string[];
  /** Fields the entry takes besides a model entry's (FAR-6 judge: sample_rate, audit). Root roles only. */
  readonly extras?: z.ZodRawShape;
}

/** The design once its data files are read and checked: what the run needs. */
export interface LoadedDesign {
  /** The design's languages: one partition per model under test and language. */
  readonly languages: readonly LanguageCode[];
  /** The enabled phases, in an order where every phase comes after the phases it consumes. */
  readonly phases: readonly PhaseSpec[];
  /** Things in the data worth a look that do not stop the run (printed by `plan` and `run`). */
  readonly warnings?: readonly string[];
  /** What `simulation_truth.json` holds for the simulated models under test (their true parameters). */
  simulationTruth?(models: readonly ModelRef[]): unknown;
}

// ---- analysis and report ---------------------------------------------------------------------

/** Table expressions of one campaign for the SQL stage: local Parquet or Athena's Glue tables. */
export interface AnalysisSources {
  /** One table over the parts of the given phases. */
  table(table: TableName, phases: readonly string[]): string;
  /** Whether the table has any part in the phase (an optional source is left out when it has none). */
  has(table: TableName, phase: string): Promise<boolean>;
}

/** What an analysis knows of the campaign beyond its tables (absent for replies brought from elsewhere). */
export interface AnalysisContext {
  readonly campaign?: CampaignCore;
  /** Bootstrap settings given for this analysis (`analyze --replies … --draws --seed`), over the design's. */
  readonly bootstrap?: BootstrapSettings;
  /** The campaign's `design:` section as the battery's schema parsed it (options of the analysis). */
  readonly design?: unknown;
}

/** How results are labelled (campaign, simulated, source, spend): one type with the report shell that draws it. */
export type { ReportMeta } from '../report/html/shell.js';
import type { ReportMeta } from '../report/html/shell.js';

/** A battery's SQL stage, estimators and result files. */
export interface BatteryAnalysis<R = unknown> {
  /** Its portable queries (`sql/`), including the core's. On Athena each is a named query. */
  readonly sql: SqlLibrary;
  /**
   * What each table placeholder of its queries stands for in its named Athena queries: which table,
   * over which phases (FAR-6: `{{readings}}` is the readings of `generate`).
   */
  readonly namedSources: Readonly<Record<string, { readonly table: TableName; readonly phases: readonly string[] }>>;
  /**
   * Queries that run() runs once per model under test, each over that model's partition of the
   * tables, rather than once (P(True)'s `ptrue_rows`, analysis/queryRows.ts). `sondage plan --aws`
   * counts their Athena runs and bytes so (lib/run/awsCost.ts). Default: none.
   */
  readonly perModelQueries?: readonly string[];
  /** The SQL step the state machine runs before the report (Athena `.sync`); the report adopts its result. */
  firstQuery(sources: AnalysisSources): string;
  /** The SQL stage and the statistics. Queries run one after another (one DuckDB connection). */
  run(db: Queryable, sources: AnalysisSources, ctx: AnalysisContext): Promise<R>;
  /** Every result file: CSV tables, `summary.md`, `report.html`. */
  files(results: R, meta: ReportMeta): readonly (readonly [name: string, content: string])[];
  /** A short table for the terminal. */
  console(results: R): string;
  /** Whether the results rest on simulated replies (labelled so everywhere). */
  simulated(results: R): boolean;
  /** How much of each numeric readout could be read (readoutHealth.ts): a readout read for no row ends the command with exit 7. */
  readouts?(results: R): readonly ReadoutHealth[];
}

// ---- simulated respondents and replies from elsewhere ----------------------------------------

/**
 * Bring your own replies (`sondage analyze --battery <b> --replies …`), in one of two forms: reply
 * rows the battery turns into the campaign tables, then analysed exactly as a run's (FAR-6), or
 * item-level rows the battery's estimators take directly (X-Value verdicts, P(True) rows), for
 * studies whose replies were read elsewhere.
 */
export type ByoSpec = ByoTablesSpec | ByoRowsSpec;

/** Bootstrap draws and seed of an analysis, where a battery's estimators take them. */
export interface BootstrapSettings {
  readonly draws?: number;
  readonly seed?: number;
}

interface ByoCommon {
  /** One line on the format, for `--help` and `sondage batteries`. */
  readonly format: string;
  /**
   * The analysis settings `analyze --replies` may set, with the value used when none is given
   * (written into the results' byo_manifest.json); a battery without a bootstrap takes none.
   */
  readonly settings?: { readonly draws: number; readonly seed: number; readonly minDraws: number };
  /**
   * Other files the rows need, by name (`sondage analyze … --input <name>=<path>`), with one line
   * each for `--help` (X-Value: the QA pairs the verdicts are scored against).
   */
  readonly inputs?: Readonly<Record<string, { readonly description: string; readonly required: boolean }>>;
  /** One line on what was read, from the summary (`replies: 980 of 1000 rows …`). */
  describe(summary: ByoImportResult['summary']): string;
}

/** Reply rows written as the campaign tables, then the battery's SQL stage and estimators. */
export interface ByoTablesSpec extends ByoCommon {
  readonly kind: 'tables';
  /**
   * Validates reply rows collected elsewhere and writes the three tables under `tablesDir` (hive
   * layout), ready for the battery's analysis; bad rows are listed, not imported.
   */
  importReplies(target: string, opts: ByoImportOptions): Promise<ByoImportResult>;
}

/** Item-level rows analysed directly by the battery's estimators (no tables, no SQL stage). */
export interface ByoRowsSpec extends ByoCommon {
  readonly kind: 'rows';
  /** Reads and checks the rows at `target` and runs the estimators; results as `analysis.files` takes them. */
  analyzeRows(target: string, opts: ByoRowsOptions): Promise<ByoRowsResult>;
}

export interface ByoImportOptions {
  readonly tablesDir: string;
  /** Keep the valid rows of a file with bad rows (`--drop-bad-rows`); else the battery may stop at the first problem found. */
  readonly dropBadRows?: boolean;
  /** Campaign name written into the rows (default `byo`). */
  readonly campaign?: string;
  readonly chunkRows?: number;
  /** The `--input` files by name (absolute paths). */
  readonly inputs?: Readonly<Record<string, string>>;
}

export interface ByoRowsOptions {
  readonly campaign: string;
  /** Analyse the valid rows of a file with bad rows (`--drop-bad-rows`); else no results are needed when a row is bad. */
  readonly dropBadRows?: boolean;
  /** Settings given on the command line, over the battery's defaults. */
  readonly bootstrap?: BootstrapSettings;
  /** The `--input` files by name (absolute paths), checked against `inputs`. */
  readonly inputs: Readonly<Record<string, string>>;
}

/** What was read: the rows kept, the rows refused (by file, row and field) and counts. */
export interface ByoReadResult {
  /** Problems by file, place and field (`kind` where the battery names it; byoIssues.ts). */
  readonly issues: readonly ByoIssue[];
  readonly warnings: readonly string[];
  /** Counts for the summary line (rows, accepted, rejected, files, …). */
  readonly summary: Readonly<Record<string, number>>;
}

export interface ByoImportResult extends ByoReadResult {
  readonly campaign: string;
  /** The phases the tables hold. */
  readonly phases: readonly string[];
}

export interface ByoRowsResult extends ByoReadResult {
  /** The battery's results, as its `analysis.files` and `analysis.console` take them; undefined when a bad row refuses the file. */
  readonly results: unknown;
}

// ---- the viewer ------------------------------------------------------------------------------

/**
 * Replies of one campaign picked by what the viewer (`sondage view`) can filter on: a phase, a
 * partition, prompt columns (the battery's factors) and a reading's reader and label.
 */
export interface ReplySelection {
  /** The phases whose replies are meant (X-Value's rubric verdict rests on steps 1, 2 and 3). */
  readonly phases: readonly string[];
  readonly model?: string;
  readonly language?: string;
  /** Prompt columns (the battery's factors, `story`, `verifier_language`) and the value each must have. */
  readonly factors?: Readonly<Record<string, string>>;
  /** Only replies with a reading by this reader (`rule`, `judge:judge`, `parse`). */
  readonly reader?: string;
  /** Only replies with a reading of this label (with `reader`: by that reader). */
  readonly label?: string;
  /** Only replies whose readers disagree: two readings of the same facet with different labels. */
  readonly disagree?: boolean;
}

/**
 * What a battery tells the viewer about its result tables. The viewer knows no battery: without
 * this, a row's `model` and `language` columns pick the replies of the first phase.
 * A battery declares it so that the viewer never names a battery.
 */
export interface BatteryView {
  /**
   * The replies behind one cell of a result table: `table` is the file name (`cells.csv`), `row`
   * the row as the CSV gives it, `column` the clicked column. Undefined when no reply is behind it
   * (a summary over all models, a column that is not a count).
   * @example cellReplies('cells.csv', { model: 'alpha', q: 'en', r: 'fr', v: 'ja', … }, 'accuracy')
   *   // { phases: ['verify'], model: 'alpha', factors: { question_language: 'en', … } }
   */
  cellReplies(table: string, row: Readonly<Record<string, string>>, column: string): ReplySelection | undefined;
}

/**
 * What a loaded design will be used for, when less than the whole run: a partition thread that runs
 * only the partitions of `languages` (lib/run/partitionThreads.ts), whose design need not hold the
 * other languages' data. Whatever a battery does with it, the items of those partitions are the
 * ones an unscoped load gives.
 */
export interface LoadScope {
  readonly languages: readonly LanguageCode[];
}

// ---- the battery -----------------------------------------------------------------------------

/** One study, as the core sees it. */
export interface Battery<D = unknown> {
  /** In item identities, campaign files (`battery:`), Glue table names (`<name>_prompts`). */
  readonly name: string;
  /** One line: the study and where it comes from. */
  readonly title: string;
  /** Every language it can render; a design's languages are a subset. */
  readonly languages: readonly LanguageCode[];
  /** The `design:` section (input form; defaults applied on parse; paths relative to the campaign file). */
  readonly design: z.ZodType<D>;
  readonly roles: Readonly<Record<string, RoleSpec>>;
  /** Files the design names, relative to the campaign file, with the field naming each (uploaded by `start --aws`). */
  dataFiles(design: D): readonly { readonly field: string; readonly file: string }[];
  /**
   * Reads and checks the design's data, and builds its phases. Throws CampaignFileError naming file and field.
   * With a `scope` (a partition thread that runs only some languages' partitions) the battery may keep
   * only what those languages' partitions need; LoadedDesign.languages still lists all of the design's.
   */
  load(campaign: CampaignCore, design: D, scope?: LoadScope): Promise<LoadedDesign>;
  /** Its columns of the prompts table. */
  readonly prompts: PromptColumns;
  readonly vocabulary: Vocabulary;
  /** Every phase its designs can have, in graph order, for `sondage batteries` and the campaign checks. */
  readonly phaseCatalog: readonly PhaseInfo[];
  readonly analysis: BatteryAnalysis;
  /** Simulated respondents (and role models), for runs without keys. */
  readonly simulator?: SimulatorFactory;
  readonly byo?: ByoSpec;
  /** How the viewer maps a cell of a result table to its replies (`sondage view`). */
  readonly view?: BatteryView;
}
