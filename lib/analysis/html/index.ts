export { renderReportHtml } from './renderReport.js';
export { escapeHtml, slug } from './escape.js';
export { HEADLINE_PAIRS, headlineIndex, matchesReadout } from './headline.js';
export { divergingColour, domainOf, matrixChart, niceTicks, rowChart, scatterChart, stackedChart } from './svg.js';
export { htmlTable, tableDetails } from './table.js';
export type * from './types.js';
