export { renderReportHtml } from './renderReport.js';
export { escapeHtml, slug } from '../../../../report/html/escape.js';
export { HEADLINE_PAIRS, headlineIndex, matchesReadout } from './headline.js';
export { divergingColour, domainOf, matrixChart, niceTicks, rowChart, scatterChart, stackedChart } from '../../../../report/html/svg.js';
export { htmlTable, tableDetails } from '../../../../report/html/table.js';
export type * from '../../../../report/html/types.js';
