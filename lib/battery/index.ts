export { defineBattery } from './defineBattery.js';
export { checkPhaseGraph } from './phaseGraph.js';
export type { PhaseGraph } from './phaseGraph.js';
export type * from './types.js';
export { closeLanguage, isBadRow, issuesCsv, ISSUE_COLUMNS, issueKindOf, languageProblem, locate, missingCells, NOTICE_KIND, quoteValue, summarizeIssues } from './byoIssues.js';
export type { ByoIssue, ByoIssueKind } from './byoIssues.js';
export { EXIT_UNREADABLE, readoutHealth, readoutWarning, unreadableReadouts, type ReadoutHealth } from './readoutHealth.js';
