/**
 * X-Value's analysis as the core runs it (BatteryAnalysis): the SQL stage over the phases that
 * stored something, the estimators, and the result files of report/.
 */
import type { BatteryAnalysis } from '../../api/battery.js';
import { runXvalueAnalysis, storedPhases, xvalueTables } from './analysis/runAnalysis.js';
import type { XvalueCampaignResults } from './analysis/runAnalysis.js';
import { xvalueConsoleTable, xvalueResultFiles } from './report/resultFiles.js';
import { XVALUE_SQL } from './sqlLibrary.js';
import { PHASES } from './types.js';

export const xvalueAnalysis: BatteryAnalysis<XvalueCampaignResults> = {
  sql: XVALUE_SQL,
  namedSources: {
    prompts: { table: 'prompts', phases: PHASES },
    replies: { table: 'replies', phases: PHASES },
    readings: { table: 'readings', phases: PHASES },
  },
  firstQuery: (sources) => XVALUE_SQL.render('xvalue_pairs', xvalueTables(sources)),
  run: async (db, sources) => runXvalueAnalysis(db, XVALUE_SQL, xvalueTables(sources, await storedPhases(sources))),
  files: (results, meta) => xvalueResultFiles(results, meta),
  console: xvalueConsoleTable,
  simulated: (results) => results.simulated,
};
