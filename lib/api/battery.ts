/**
 * The public entry for study authors: `import { defineBattery, z, … } from 'sondage/battery'`.
 * Everything a battery may use of sondage is exported here — the battery contract's types, the
 * readers, SQL registration, CSV and Markdown helpers for its result files, the simulator's types
 * and the deterministic hashing a simulator draws from. It is versioned with the package: a
 * breaking change to anything exported here is a major version (docs/writing-a-battery.md).
 *
 * A battery loaded from the user's folder gets this module of the running sondage, whatever its
 * own node_modules hold (lib/batteries/selfReference.ts).
 */
export { z } from 'zod';
export { defineBattery } from '../battery/defineBattery.js';
export type * from '../battery/types.js';
export { firstTokenProbability, readFirstTokenProbability, FIRST_TOKEN_LABELS } from '../battery/readers/index.js';
export type { FirstTokenProbability, FirstTokenReadingOptions, LabelCandidates, ProbabilityBound } from '../battery/readers/index.js';
export type { PromptItem, ChatMessage, GenerationSettings, LanguageCode, FactorRecord, FactorValue, TableName } from '../core/types.js';
export { isLanguageCode } from '../core/languages.js';
export { stableId, uniformFromKey, seededRandom, seedFromKey } from '../core/hash.js';
export { SondageError, CampaignFileError } from '../errors.js';
export { SqlLibrary } from '../query/sql.js';
export { columnDefs } from '../store/schemas.js';
export type { ColumnDef, ColumnType, PromptColumns } from '../store/schemas.js';
export { toCsv } from '../report/csv.js';
export { mdTable, fmtNumber } from '../report/markdown.js';
export { renderReportPage, reportFigure, reportSectionHtml, spendText } from '../report/html/shell.js';
export type { ReportContent, ReportSection } from '../report/html/shell.js';
export { htmlTable, tableDetails } from '../report/html/table.js';
export { escapeHtml, slug } from '../report/html/escape.js';
export { matrixChart, rowChart, scatterChart, stackedChart } from '../report/html/svg.js';
export type { ChartRow, ChartSeries, MatrixSpec, RowChartSpec, ScatterSpec, StackedSpec, TableSpec } from '../report/html/types.js';
export { mean, median, quantile, pearson } from '../metrics/stats.js';
export type { SimulatorFactory, SimulatedEntry, SimulatedModel, SimulatedReply } from '../providers/simulated/types.js';
export type { ConfigLocation } from '../providers/simulated/types.js';
export { parseSimulationBlock } from '../battery/simulationBlock.js';
