export { analyzeCampaign } from './analyzeCampaign.js';
export type { AnalyzeOptions } from './analyzeCampaign.js';
export { csvField, formatCsvValue, toCsv } from './csv.js';
export { AnalysisError } from './errors.js';
export { compareReadouts, estimate, MIN_COMMON_STORIES, parseReadout, readoutConvergence, readoutOf } from './estimators.js';
export { labelKey, parseCellSummaryRows, parseItemShareRows, parseLabelMaps, parseReplyTotalsRows } from './parseRows.js';
export { formatConsoleTable, RESULT_FILES, summaryMarkdown, writeResults } from './report.js';
export { parquetSource, renderSql, runSql, SQL_NAMES } from './runSql.js';
export type { SqlName } from './runSql.js';
export { mean, median, pearson, quantile } from './stats.js';
export { summarizeCells } from './summarizeCells.js';
export type * from './types.js';
export { twoWayShares, habitAnalysis, habitModelMeans, habitVariance, signChanges } from './habits.js';
export {
  BOOTSTRAP_DRAWS,
  BOOTSTRAP_SEED,
  classBootstrap,
  DEFAULT_IDENTITY_READOUTS,
  IDENTITY_METRICS,
  identityAnalysis,
  identityCounts,
  identityModels,
  nearestNeighbours,
  selectReadouts,
} from './identity.js';
export { comparePairs, pairClass, pairIndices, profileMatrix, weightedMeanAbsDiff, weightedPearson } from './profiles.js';
export type { PairIndex, ProfileMatrix } from './profiles.js';
export { STUDY_FILES, studyCsvFiles, studySummarySections } from './studyReport.js';
export { agreementAnalysis, parseAgreementRows, polarityShares, renderAgreementSql, replyDisagreement, runReadingAgreement } from './agreement.js';
export { residualReadoutComparisons } from './readoutResiduals.js';
export { runSameReplies, sameRepliesAnalysis, sameReplyPairs } from './sameReplies.js';
export { renderReportHtml } from './html/index.js';
