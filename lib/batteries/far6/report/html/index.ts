export { renderReportHtml } from './renderReport.js';
export { HEADLINE_PAIRS, headlineIndex, matchesReadout } from './headline.js';
