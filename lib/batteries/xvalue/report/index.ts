export { csvTables } from './csvTables.js';
export { xvalueSummaryMarkdown } from './markdownSummary.js';
export { renderXvalueReport } from './html/renderXvalueReport.js';
export { checkpointSection, coverageSection, heatmapSection, languageSection, lowestCellsSection, overallSection, step1Section, XVALUE_PAPER } from './html/sections.js';
export { xvalueConsoleTable, xvalueResultFiles } from './resultFiles.js';
export { STRATEGY_TITLE, pct } from './format.js';
