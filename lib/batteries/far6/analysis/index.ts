export { analyzeCampaign } from './analyzeCampaign.js';
export type { AnalyzeOptions } from './analyzeCampaign.js';
export { AnalysisError, csvField, formatCsvValue, mean, median, pearson, quantile, toCsv } from '../../../api/battery.js';
export { compareReadouts, estimate, MIN_COMMON_STORIES, parseReadout, readoutConvergence, readoutOf } from './estimators.js';
export { labelKey, parseCellSummaryRows, parseItemShareRows, parseLabelMaps, parseReplyTotalsRows } from './parseRows.js';
export { formatConsoleTable, RESULT_FILES, summaryMarkdown, writeResults } from '../report/report.js';
export { FAR6_SQL } from '../sqlLibrary.js';
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
export { comparePairs, pairClass, pairIndices, profileMatrix, weightedPearson, weightedPearsonAndMeanAbsDiff } from './profiles.js';
export type { PairIndex, ProfileMatrix } from './profiles.js';
export { STUDY_FILES, studyCsvFiles, studySummarySections } from '../report/studyReport.js';
export { agreementAnalysis, parseAgreementRows, polarityShares, renderAgreementSql, replyDisagreement, runReadingAgreement } from './agreement.js';
export { residualReadoutComparisons } from './readoutResiduals.js';
export { runSameReplies, sameRepliesAnalysis, sameReplyPairs } from './sameReplies.js';
export { renderReportHtml } from '../report/html/index.js';
