/**
 * Result types of the FAR-6 analysis (Same Judgment, Different Yes §3, §4, §6 and "Estimation steps"),
 * one file per family under types/: the vocabulary (cell, readout), the SQL rows, the estimates,
 * the further readout comparisons, identity, habits, agreement, the judge audit, and the results
 * that hold them all. Import from here.
 */
export type { Queryable, TableSources } from '../../../api/battery.js';
export type * from './types/vocabulary.js';
export type * from './types/sqlRows.js';
export type * from './types/estimates.js';
export type * from './types/convergence.js';
export type * from './types/identity.js';
export type * from './types/habits.js';
export type * from './types/agreement.js';
export type * from './types/judgeAudit.js';
export type * from './types/results.js';
