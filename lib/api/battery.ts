/**
 * The public entry for study authors: `import { defineBattery, z, … } from 'sondage/battery'`.
 * Everything a battery may use of sondage is exported here, and nothing else is: the built-in
 * batteries (the folders under lib/batteries/) reach lib/ outside their own folder only through
 * this module (test/architecture/publicEntry.test.ts), so what they need is what a battery of one's
 * own gets. It is versioned with the package: a breaking change to anything exported here is a
 * major version (docs/writing-a-battery.md).
 *
 * The entry loads no CLI, run, analysis or AWS code, and DuckDB's native binding only when a
 * battery first queries with it (test/architecture/publicEntry.test.ts).
 *
 * A battery loaded from the user's folder gets this module of the running sondage, whatever its
 * own node_modules hold (lib/batteries/selfReference.ts).
 */

// ── The contract: the battery object, its types, the shared data contracts ──────────────────────
export { z } from 'zod';
export { defineBattery } from '../battery/defineBattery.js';
export type * from '../battery/types.js';
export type { PromptItem, ChatMessage, GenerationSettings, LanguageCode, FactorRecord, FactorValue, TableName } from '../core/types.js';
export { isLanguageCode, LANGUAGE_INFO } from '../core/languages.js';
export { mergeSettings } from '../core/settings.js';

// ── Design files: zod pieces for the `design:` block, reading the files it names ─────────────────
export { enumOf, modelEntrySchema, relativePath, uniqueList } from '../battery/schemas.js';
export { fromField, jsonSyntaxProblem, kindOf, looksLikeSecret, parseYamlFile, readTextFile, readTextFileSync, shortValue, withLines } from '../core/fileText.js';
export type { YamlFile } from '../core/fileText.js';

// ── Item ids: canonical JSON and the stable hash an item id is made of ─────────────────────────
export { stableId, canonicalJson, cachedCanonicalJson, idOfJson } from '../core/hash.js';
export { filledMessage } from '../core/filledText.js';
export { hasOnlyKeys, isPlainObject } from '../core/plainObject.js';

// ── Readers: the first-token probability, and how much of a readout could be read ───────────────
export { firstTokenProbability, readFirstTokenProbability, FIRST_TOKEN_LABELS } from '../battery/readers/index.js';
export type { FirstTokenProbability, FirstTokenReadingOptions, LabelCandidates, ProbabilityBound } from '../battery/readers/index.js';
export { readoutHealth, readoutWarning } from '../battery/readoutHealth.js';
export type { ReadoutHealth } from '../battery/readoutHealth.js';

// ── SQL and queries: a battery's SQL folder, the shared queries, reading result rows ────────────
export { SqlLibrary, CORE_SQL } from '../query/sql.js';
export type { ChunkOptions, Queryable, SourceMap, TableSources } from '../query/types.js';
export { RowReader } from '../query/rowReader.js';
export { AnalysisError, analysisQueryError } from '../query/errors.js';

// ── Cost estimates: prompt tokens for `plan` ───────────────────────────────────────────────────
export { estimatePromptTokens } from '../pricing/pricing.js';

// ── Report blocks: CSV, Markdown, and the HTML shell, tables and charts every report shares ──────
export { toCsv, csvField, formatCsvValue } from '../report/csv.js';
export { mdTable, fmtNumber } from '../report/markdown.js';
export { renderReportPage, reportFigure, reportSectionHtml } from '../report/html/shell.js';
export { spendMarkdown, spendText, spendWarning } from '../report/spend.js';
export type { ReportSpend } from '../report/spend.js';
export type { ReportContent, ReportSection } from '../report/html/shell.js';
export { htmlTable, tableDetails } from '../report/html/table.js';
export { escapeHtml, slug } from '../report/html/escape.js';
export { divergingColour, domainOf, matrixChart, niceTicks, rowChart, scatterChart, stackedChart } from '../report/html/svg.js';
export type {
  ChartRow,
  ChartSeries,
  HtmlReportOptions,
  MarkShape,
  MatrixCell,
  MatrixSpec,
  RowBar,
  RowChartSpec,
  RowMark,
  RowRange,
  ScatterSpec,
  StackedSpec,
  TableSpec,
} from '../report/html/types.js';

// ── Metrics and statistics shared by the studies (each tested against hand-computed values) ─────
export { mean, median, quantile, pearson } from '../metrics/stats.js';
export { groupBy, groupByParts } from '../metrics/groupBy.js';
export { confusionOf, ratesOf } from '../metrics/classification.js';
export type { BinaryCase, ClassificationRates, Confusion } from '../metrics/classification.js';
export { ECE_BINS, reliabilityBins, summarizeConfidence, summarizeConfidenceColumns } from '../metrics/calibration.js';
export type { ReliabilityBin, ScoredOutcome } from '../metrics/calibration.js';
export { bootstrapTauReference, orderReversals, resampleIndices, tauBetween } from '../metrics/rank.js';
export type { BootstrapTauReference, ScoresByUnit } from '../metrics/rank.js';
export { fitRandomIntercept, ols } from '../metrics/regression.js';
export type { Coefficient } from '../metrics/regression.js';
export { spreadOf } from '../metrics/spread.js';
export { averageShares, explainedVarianceShares } from '../metrics/variance.js';
export type { FactorRow, VarianceDecomposition } from '../metrics/variance.js';

// ── Simulator helpers: the simulated provider's types, seeded draws, token counts, its errors ───
export type { SimulatorFactory, SimulatedEntry, SimulatedModel, SimulatedReply } from '../providers/simulated/types.js';
export type { ConfigLocation } from '../providers/simulated/types.js';
export type { GenerateRequest, TokenLogprob } from '../providers/types.js';
export { parseSimulationBlock } from '../battery/simulationBlock.js';
export { uniformFromKey, seededRandom, seedFromKey } from '../core/hash.js';
export { approximateTokens, approximateTokensOf } from '../providers/simulated/approximateTokens.js';
export { SimulatedRequestError } from '../providers/errors.js';

// ── Bring your own replies: issue lists, the stored tables' columns, DuckDB for staging rows ─────
export { languageProblem, missingCells, NOTICE_KIND } from '../battery/byoIssues.js';
export type { ByoIssue } from '../battery/byoIssues.js';
export { columnDefs, tableColumns, PARTITION_COLUMNS, TABLE_SCHEMAS } from '../store/schemas.js';
export type { ColumnDef, ColumnType, PromptColumns, PromptRow } from '../store/schemas.js';
export type { ReadingRow, ReplyRow } from '../store/types.js';
export { assertSafeSegment } from '../store/layout.js';
export { codedSource, DuckDb, sqlIdent, sqlString } from '../store/DuckDb.js';
export { duckdbApi } from '../store/duckdbApi.js';
export { spillingInstance } from '../store/duckdbSpill.js';

// ── Errors: one base class, file errors that name the file, field and what was expected ─────────
export { SondageError, CampaignFileError, formatIssues } from '../errors.js';
export type { FileIssue } from '../errors.js';
