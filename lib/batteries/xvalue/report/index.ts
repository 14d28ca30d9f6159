export { csvTables } from './csvTables.js';
export { xvalueSummaryMarkdown } from './markdownSummary.js';
export { renderXvalueReport } from './html/renderXvalueReport.js';
export { checkpointSection, coverageSection, filesSection, heatmapSection, languageSection, lowestCellsSection, overallSection, step1Section } from './html/sections.js';
export type { Section } from './html/sections.js';
export { xvalueConsoleTable, xvalueResultFiles } from './resultFiles.js';
export { STRATEGY_TITLE, pct } from './format.js';
