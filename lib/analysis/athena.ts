/**
 * A battery's analysis with its SQL stage on Athena (DESIGN.md "The flow of one campaign"): the
 * same queries and statistics as the local run, over the Glue tables filtered to one campaign, so
 * the numbers agree with a local analysis of the same Parquet. The prompts table is the battery's
 * (`<battery>_prompts`, its own typed columns); replies and readings are shared by every battery.
 */
import type { AnalysisSources, Battery, CampaignCore } from '../battery/types.js';
import type { TableName } from '../core/types.js';
import { SondageError } from '../errors.js';
import type { QueryStillRunning } from '../query/errors.js';
import type { AthenaQueryable } from '../store/AthenaQueryable.js';
import { assertSafeSegment, parsePartKey, phasePrefix, tablePrefix } from '../store/layout.js';
import type { BlobStore } from '../store/types.js';
import { storedSpend } from './storedSpend.js';

function quote(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** The Glue table of a campaign table: the battery's own prompts table, the shared replies and readings. */
export function glueTableName(battery: string, table: TableName): string {
  return table === 'prompts' ? `${battery}_prompts` : table;
}

/**
 * Sources for a battery's queries on Athena: each Glue table filtered to one campaign, the given
 * phases and the given models. The tables use injected partition projection for campaign, phase
 * and model (infra/constructs/Analytics.ts), so every query must name their values. Models are
 * listed once each, sorted (see sameQueryKey for why the order does not matter to adoption).
 * `has` answers from `stored` (the tables and phases with parts, listed from the bucket), or yes.
 * @example battery.analysis.firstQuery(athenaSources('sondage_db', battery.name, 'my-campaign', ['beta', 'alpha']))
 */
export function athenaSources(database: string, battery: string, campaign: string, models: readonly string[], stored?: ReadonlySet<string>, languages?: readonly string[]): AnalysisSources {
  if (models.length === 0) throw new SondageError(`campaign ${campaign}: no models to query (injected projection needs at least one)`);
  const list = [...new Set(models)].sort().map(quote).join(', ');
  const db = `"${database.replaceAll('"', '""')}"`;
  return {
    table: (table, phases) =>
      `(SELECT * FROM ${db}."${glueTableName(battery, table)}" WHERE campaign_key = ${quote(campaign)} AND phase_key IN (${phases.map(quote).join(', ')}) AND model IN (${list})${
        languages ? ` AND language IN (${[...new Set(languages)].sort().map(quote).join(', ')})` : ''
      })`,
    has: async (table, phase) => stored === undefined || stored.has(`${phase}/${table}`),
  };
}

/** The model/language partitions a campaign has stored parts of, in the given phases, sorted. */
export async function storedPartitions(store: BlobStore, campaign: string, phases: readonly string[]): Promise<{ model: string; language: string }[]> {
  assertSafeSegment('campaign id', campaign);
  const seen = new Map<string, { model: string; language: string }>();
  for (const phase of phases) {
    for (const key of await store.list(phasePrefix(campaign, phase))) {
      const part = parsePartKey(key);
      if (part) seen.set(`${part.model}/${part.language}`, { model: part.model, language: part.language });
    }
  }
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, p]) => p);
}

/**
 * What a campaign has stored: the models with parts, sorted (Athena cannot enumerate injected
 * partitions), and every `<phase>/<table>` that has a part.
 */
export async function storedParts(store: BlobStore, campaign: string, phases: readonly string[]): Promise<{ models: string[]; tables: Set<string> }> {
  assertSafeSegment('campaign id', campaign);
  const models = new Set<string>();
  const tables = new Set<string>();
  for (const phase of phases) {
    for (const key of await store.list(phasePrefix(campaign, phase))) {
      const part = parsePartKey(key);
      if (!part) continue;
      models.add(part.model);
      tables.add(`${part.phase}/${part.table}`);
    }
  }
  return { models: [...models].sort(), tables };
}

export interface AthenaAnalysisOptions {
  readonly db: AthenaQueryable;
  /** The campaign's files (the data bucket): what is stored is listed from it. */
  readonly store: BlobStore;
  readonly battery: Battery;
  readonly campaign: CampaignCore;
  /** The campaign's parsed `design:` section (the analysis's options). */
  readonly design?: unknown;
  /** The battery's phases for this campaign. */
  readonly phases: readonly string[];
  /** The design's languages: partitions of others (a language the campaign dropped) are left out. */
  readonly languages?: readonly string[];
  /** The state machine's SQL step: adopted, so the query it ran is not run (and paid) again. */
  readonly queryExecutionId?: string;
}

export interface AthenaAnalysis {
  /** The battery's results (its own type). */
  readonly results: unknown;
  readonly models: readonly string[];
  /** True when `queryExecutionId` answered one of the analysis queries. */
  readonly adopted: boolean;
  /** Athena executions whose results the analysis read, in order. */
  readonly queryExecutionIds: readonly string[];
  /** The cost of every stored reply of the campaign (lib/analysis/storedSpend.ts), as the local analysis sums it. */
  readonly spentUsd: number;
}

/** Where a resumable analysis stopped: the query still running when the Queryable's time ran short. */
export interface AthenaAnalysisRunning {
  readonly done: false;
  readonly stillRunning: QueryStillRunning;
  readonly models: readonly string[];
}

/**
 * The battery's analysis of a campaign with its SQL stage on Athena, over the Glue tables filtered
 * to the campaign's stored models.
 * @example const { results } = await analyzeOnAthena({ db, store, battery, campaign, phases });
 */
export async function analyzeOnAthena(options: AthenaAnalysisOptions): Promise<AthenaAnalysis> {
  const run = await resumeAnalysisOnAthena(options);
  if (!run.done) throw new SondageError(`campaign ${options.campaign.name}: ${run.stillRunning.message}; the analysis waits for its queries only with a resumable Queryable`);
  return run;
}

/**
 * The analysis as `analyzeOnAthena` runs it, over a resumable Queryable (AthenaQueryable
 * `resume`, the report Lambda): when the Queryable's time runs short while a query still runs, the
 * answer says which (`done: false`) instead of throwing, and running the analysis again with the
 * Queryable's `started` resumes it. The analysis is replayed from its first query each time: the
 * queries that finished are read again (GetQueryResults, no scan), none is started twice, and the
 * statistics see exactly the rows of one uninterrupted run.
 */
export async function resumeAnalysisOnAthena(options: AthenaAnalysisOptions): Promise<(AthenaAnalysis & { readonly done: true }) | AthenaAnalysisRunning> {
  const { db, store, battery, campaign, phases } = options;
  const stored = await storedParts(store, campaign.name, phases);
  // The models the campaign file has now: parts of a model it dropped stay stored, unread.
  const models = stored.models.filter((m) => campaign.models.some((c) => c.id === m));
  if (models.length === 0) {
    throw new SondageError(`campaign ${campaign.name}: no stored parts of its models under ${tablePrefix(campaign.name, phases[0] ?? 'generate', 'replies')}; nothing to analyse (has a phase run?)`);
  }
  const sources = athenaSources(db.database, battery.name, campaign.name, models, stored.tables, options.languages);
  const first = options.queryExecutionId;
  if (first !== undefined) await db.adopt(first);
  let results: unknown;
  try {
    results = await battery.analysis.run(db, sources, { campaign, design: options.design });
  } catch (err) {
    // However the battery passed the signal on (named, wrapped), the Queryable knows it stopped.
    const running = db.stillRunning;
    if (running) return { done: false, stillRunning: running, models };
    throw err;
  }
  // A battery that caught the signal and went on has results without the query's rows: not done.
  if (db.stillRunning) return { done: false, stillRunning: db.stillRunning, models };
  // Every stored model and language, not only the current ones: what was dropped was paid for.
  const withReplies = phases.filter((p) => stored.tables.has(`${p}/replies`));
  const spentUsd = await storedSpend(db, withReplies.length === 0 ? undefined : athenaSources(db.database, battery.name, campaign.name, stored.models, stored.tables).table('replies', withReplies)).catch((err: unknown) => {
    if (db.stillRunning) return undefined;
    throw err;
  });
  if (spentUsd === undefined || db.stillRunning) return { done: false, stillRunning: db.stillRunning!, models };
  // Adopted only if the execution's text was one of the analysis queries (its rows were read).
  const adopted = first !== undefined && db.queryExecutionIds.includes(first);
  return { done: true, results, models, adopted, queryExecutionIds: db.queryExecutionIds, spentUsd };
}
