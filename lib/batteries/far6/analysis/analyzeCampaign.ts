/**
 * The first part of the FAR-6 analysis (Same Judgment, Different Yes §3, §4, §6, "Estimation steps"): the portable SQL
 * stage aggregates replies to item level, the TypeScript estimators do the rest.
 */
import { agreementAnalysis, parseAgreementRows } from './agreement.js';
import { CellEstimates } from './estimators.js';
import { habitAnalysis } from './habits.js';
import { identityAnalysis } from './identity.js';
import { judgeAuditAnalysis, runJudgeAudit } from './judgeAudit.js';
import { ITEM_ROW_CHUNKS, parseItemShareRows, parseLabelMaps, parseReplyTotalsRows } from './parseRows.js';
import { residualReadoutComparisons } from './readoutResiduals.js';
import { FAR6_SQL } from '../sqlLibrary.js';
import { SameReplies } from './sameReplies.js';
import { CellSummaries } from './summarizeCells.js';
import type { Proposition } from '../types.js';
import type { AnalysisResults, EstimateOptions, IdentityOptions, ItemShareRow, Queryable, TableSources } from './types.js';

export type AnalyzeOptions = EstimateOptions &
  IdentityOptions & {
    /**
     * The judge audit (Same Judgment, Different Yes "Sentence judging"): a readings source holding the generate-phase
     * readings and the audit phases' readings together (their `phase` column tells them apart),
     * and the primary judge's reader where the generate readings hold more than one judge.
     */
    readonly judgeAudit?: { readonly readings: string; readonly primaryReader?: string };
    /** Called as each stage ends, with its name (bench/analysis times them). */
    readonly onStage?: (stage: string) => void;
  };

/**
 * Runs the SQL stage on `db` (label_maps, same_replies_shares, item_shares, reading_agreement,
 * reply_totals) and the estimators on its rows: story scores and habits per cell, then profiles
 * across cells, model identity and habit variance. Each query but the first starts before a stretch
 * of JavaScript that does not need its rows, and DuckDB runs it on its own threads meanwhile (on a
 * second connection where the first still streams rows: lib/store/keptSubqueries.ts;
 * bench/README.md, "analysis": how it runs). The rows of same_replies_shares and of item_shares
 * are estimated a cell at a time as they arrive (cellByCell), so that no more than one cell's item
 * rows are held at once.
 * @example
 * const tables = { prompts: parquetSource(`${dir}/prompts/** /*.parquet`), replies: …, readings: … };
 * const results = await analyzeCampaign(db, tables);
 */
export async function analyzeCampaign(db: Queryable, tables: TableSources, opts: AnalyzeOptions = {}): Promise<AnalysisResults> {
  const stage = opts.onStage ?? (() => undefined);
  const { labelMaps, sameRows } = await labelMapsFirst(db, tables, stage);
  const scope: Scope = { db, tables, labelMaps, opts, stage };
  const { sameReplies, itemRows } = await sameRepliesFirst(scope, sameRows);
  const { estimates, cellSummary, nItemRows, agreementRows } = await perCell(scope, itemRows);
  const agreement = agreementAnalysis(parseAgreementRows(await agreementRows()));
  stage('sql reading_agreement (the rest) and agreement');
  const replyTotalsRows = await FAR6_SQL.start(db, 'reply_totals', tables);
  const residual = residualReadoutComparisons(estimates.storyScores, estimates.comparisons, estimates.minCommonStories);
  // Same Judgment, Different Yes §5 and §6: across cells, on the story scores and habits just estimated.
  const identity = identityAnalysis(estimates.storyScores, { ...opts, minCommonStories: estimates.minCommonStories });
  const habits = habitAnalysis(estimates.cellHabits);
  stage('residual comparisons, identity, habits (reply_totals in DuckDB meanwhile)');
  const replyTotals = parseReplyTotalsRows(await replyTotalsRows());
  stage('sql reply_totals (the rest)');
  const audit = opts.judgeAudit;
  const judgeAudit = audit
    ? judgeAuditAnalysis(await runJudgeAudit(db, { ...tables, readings: audit.readings }), audit.primaryReader ? { primaryReader: audit.primaryReader } : {})
    : undefined;
  if (audit) stage('judge audit');
  return {
    ...estimates,
    cellSummary,
    replyTotals,
    itemRows: nItemRows,
    simulated: replyTotals.some((t) => t.simulated_attempts > 0),
    identity,
    habits,
    agreement,
    residualComparisons: residual.cells,
    residualConvergence: residual.convergence,
    sameReplies,
    ...(judgeAudit ? { judgeAudit } : {}),
  };
}

/**
 * The label maps. same_replies_shares.sql (its rows read by the caller) starts before the label
 * rows are read and parsed here: DuckDB makes the tables the later queries share and runs it
 * meanwhile. The label_maps rows do not outlive the call.
 */
async function labelMapsFirst(db: Queryable, tables: TableSources, stage: (name: string) => void) {
  const labelRows = await FAR6_SQL.start(db, 'label_maps', tables);
  const sameRows = FAR6_SQL.startChunks(db, 'same_replies_shares', tables, ITEM_ROW_CHUNKS);
  // Awaited after the label rows: until then a failure must not count as unhandled.
  sameRows.catch(() => undefined);
  const labelMaps = parseLabelMaps(await labelRows());
  stage('sql label_maps (same_replies_shares in DuckDB meanwhile)');
  return { labelMaps, sameRows: await sameRows };
}

/** What the stages after the label maps share: the connection, the tables, the maps, the options and the stage hook. */
interface Scope {
  readonly db: Queryable;
  readonly tables: TableSources;
  readonly labelMaps: ReadonlyMap<string, Proposition>;
  readonly opts: AnalyzeOptions;
  readonly stage: (name: string) => void;
}

/** The rows of a query already started in DuckDB, a chunk at a time (FAR6_SQL.startChunks). */
type StartedChunks = (each: (rows: Record<string, unknown>[], offset: number) => void) => Promise<void>;

/**
 * Reads item rows (item_shares.sql, same_replies_shares.sql) a chunk at a time and hands `add` each
 * cell's rows whole: the queries order them by model and language, and what a cell gives depends
 * on its rows alone (CellEstimates), so no more than one cell's rows are held — at three times
 * FAR-6's full size the item rows are ~2 M. Resolves to the number of rows read.
 */
async function cellByCell(read: StartedChunks, file: string, labelMaps: ReadonlyMap<string, Proposition>, add: (rows: ItemShareRow[]) => void): Promise<number> {
  let cell: ItemShareRow[] = [];
  let model: string | undefined;
  let language: string | undefined;
  let n = 0;
  await read((chunk, offset) => {
    for (const row of parseItemShareRows(chunk, labelMaps, file, offset)) {
      if (row.model !== model || row.language !== language) {
        if (cell.length > 0) add(cell);
        cell = [];
        model = row.model;
        language = row.language;
      }
      cell.push(row);
    }
    n += chunk.length;
  });
  if (cell.length > 0) add(cell);
  return n;
}

/**
 * same_replies_shares.sql's rows (started by the caller), estimated a cell at a time as they
 * arrive. item_shares.sql starts once the first of them arrive (DuckDB has then computed
 * same_replies_shares whole: its rows are sorted), so that DuckDB runs it while JavaScript
 * estimates these rows and then compares the two readings' profiles.
 */
async function sameRepliesFirst({ db, tables, labelMaps, opts, stage }: Scope, sameRows: StartedChunks) {
  let itemRows: Promise<StartedChunks> | undefined;
  const startItemShares = (): Promise<StartedChunks> => {
    if (itemRows === undefined) {
      itemRows = FAR6_SQL.startChunks(db, 'item_shares', tables, ITEM_ROW_CHUNKS);
      // Awaited once the same_replies_shares rows are read: until then a failure must not count as unhandled.
      itemRows.catch(() => undefined);
    }
    return itemRows;
  };
  const same = new SameReplies(opts.minCommonStories);
  const sameThenItems: StartedChunks = (each) =>
    sameRows((rows, offset) => {
      void startItemShares();
      each(rows, offset);
    });
  await cellByCell(sameThenItems, 'same_replies_shares.sql', labelMaps, (rows) => same.add(rows));
  stage('sql same_replies_shares and its estimates by cell (item_shares in DuckDB meanwhile)');
  const sameReplies = same.results();
  stage('same-replies comparisons (item_shares in DuckDB meanwhile)');
  return { sameReplies, itemRows: await startItemShares() };
}

/**
 * item_shares.sql's rows (started by the caller), estimated a cell at a time as they arrive
 * (cellByCell); reading_agreement.sql then runs in DuckDB while the comparisons between readouts
 * are computed here.
 */
async function perCell({ db, tables, labelMaps, opts, stage }: Scope, itemShares: StartedChunks) {
  const estimates = new CellEstimates(opts);
  const summaries = new CellSummaries();
  const n = await cellByCell(itemShares, 'item_shares.sql', labelMaps, (rows) => {
    estimates.add(rows);
    summaries.add(rows);
  });
  stage(`sql item_shares and estimates by cell (${n} item rows)`);
  const agreementRows = await FAR6_SQL.start(db, 'reading_agreement', tables);
  // cell_summary.sql gives the same rows (tested); computing them here spares a second item_shares pass.
  const results = estimates.results();
  const cellSummary = summaries.rows();
  stage('comparisons between readouts, cell summary (reading_agreement in DuckDB meanwhile)');
  return { estimates: results, cellSummary, nItemRows: n, agreementRows };
}
