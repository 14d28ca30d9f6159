export { buildRows, labelVerdict } from './buildRows.js';
export {
  DOMINANT_SHARE,
  analyzeXvalueRows,
  binaryCase,
  categoryRates,
  cellRates,
  checkpointMetrics,
  languageRates,
  lowestCells,
  overallRates,
  step1Agreement,
} from './estimators.js';
export type { AnalyzeOptions } from './estimators.js';
export type * from './types.js';
export { parseFacetRows, parsePairRows, parseReplyTotals } from './parseSqlRows.js';
export type { ReplyTotalsRow } from './parseSqlRows.js';
export { runXvalueAnalysis, storedPhases, xvalueTables } from './runAnalysis.js';
export type { XvalueCampaignResults } from './runAnalysis.js';
