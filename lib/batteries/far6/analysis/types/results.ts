/**
 * What one FAR-6 analysis returns, all parts together, and the metadata its summary is written
 * with.
 */
import type { AgreementResults } from './agreement.js';
import type { ResidualConvergence, ResidualReadoutComparison, SameRepliesResults } from './convergence.js';
import type { EstimateResults } from './estimates.js';
import type { HabitResults } from './habits.js';
import type { IdentityResults } from './identity.js';
import type { JudgeAuditResults } from './judgeAudit.js';
import type { CellSummaryRow, ReplyTotalsRow } from './sqlRows.js';
import type { ReportSpend } from '../../../../api/battery.js';

export interface AnalysisResults extends EstimateResults {
  readonly cellSummary: readonly CellSummaryRow[];
  readonly replyTotals: readonly ReplyTotalsRow[];
  /** Item rows (prompt item × reader) the estimators read. */
  readonly itemRows: number;
  /** True when any stored attempt came from the simulated provider. */
  readonly simulated: boolean;
  /** Profiles across cells and model identity (Same Judgment, Different Yes §5); absent where not computed. */
  readonly identity?: IdentityResults;
  /** Habit variance and sign changes under negation (Same Judgment, Different Yes §6); absent where not computed. */
  readonly habits?: HabitResults;
  /** The same replies read twice: disagreement and polarity shares (Same Judgment, Different Yes §4, §7); absent where not computed. */
  readonly agreement?: AgreementResults;
  /** Residual-profile r between the readouts of each cell (Same Judgment, Different Yes §4); absent where not computed. */
  readonly residualComparisons?: readonly ResidualReadoutComparison[];
  readonly residualConvergence?: readonly ResidualConvergence[];
  /** The same replies read twice with identical weights (Same Judgment, Different Yes §4); absent where not computed. */
  readonly sameReplies?: SameRepliesResults;
  /** Second judge and test–retest on the audit sample (Same Judgment, Different Yes "Sentence judging"); absent without audit readings. */
  readonly judgeAudit?: JudgeAuditResults;
}

export interface ReportMeta {
  readonly campaign: string;
  /** Forces the simulated label on (results.simulated also sets it). */
  readonly simulated?: boolean;
  /** ISO time stamp written into summary.md; omitted when absent, so reports can be reproduced. */
  readonly generatedAt?: string;
  /** Where the data came from (a directory, an S3 prefix), for the summary. */
  readonly source?: string;
  /** The stored replies' cost against the cap, and any overrun the ledger recorded; absent where no cap applies. */
  readonly spend?: ReportSpend;
}
