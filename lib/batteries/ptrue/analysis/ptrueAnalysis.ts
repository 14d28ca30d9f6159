/**
 * The battery's analysis for the core (Battery.analysis): the SQL stage (ptrue_rows over the six
 * phase tables, one model at a time: queryRows.ts) and the estimators, then the result files. Bring-your-own rows skip the SQL and
 * call analyzePtrueRows directly (byo/).
 */
import type { AnalysisSources, BatteryAnalysis, SourceMap } from '../../../api/battery.js';
import type { PtrueDesign } from '../design.js';
import { PTRUE_SOURCES, PTRUE_SQL } from '../sqlLibrary.js';
import { consoleSummary, ptrueFiles } from '../report/index.js';
import { analyzePtrueRows, type PtrueResults } from './analyzeRows.js';
import { queryPtrueRows } from './queryRows.js';

/** Item-bootstrap draws when the campaign gives none (design.analysis.bootstrap_draws). */
export const DEFAULT_DRAWS = 200;

/** The table expression of every source ptrue_rows reads. */
export function ptrueSourceMap(sources: AnalysisSources): SourceMap {
  return Object.fromEntries(PTRUE_SOURCES.map(([name, table, phase]) => [name, sources.table(table, [phase])]));
}

export function createPtrueAnalysis(options: { readonly draws?: number; readonly seed?: number } = {}): BatteryAnalysis<PtrueResults> {
  return {
    sql: PTRUE_SQL,
    namedSources: Object.fromEntries(PTRUE_SOURCES.map(([name, table, phase]) => [name, { table, phases: [phase] }])),
    perModelQueries: ['ptrue_rows'],
    // The first query run() runs (the list of models), so that Athena's result is adopted.
    firstQuery: (sources) => PTRUE_SQL.render('ptrue_models', ptrueSourceMap(sources)),
    async run(db, sources, ctx) {
      const map = ptrueSourceMap(sources);
      const rows = await queryPtrueRows(db, map);
      const [flag] = await PTRUE_SQL.run<{ simulated: unknown }>(db, 'ptrue_simulated', map);
      const design = ctx.design as Pick<PtrueDesign, 'analysis'> | undefined;
      return analyzePtrueRows(rows, {
        draws: options.draws ?? design?.analysis.bootstrap_draws ?? DEFAULT_DRAWS,
        seed: options.seed ?? design?.analysis.seed ?? ctx.campaign?.seed ?? 1,
        simulated: Number(flag?.simulated ?? 0) === 1,
      });
    },
    files: (results, meta) => ptrueFiles(results, meta),
    console: consoleSummary,
    simulated: (results) => results.simulated,
    readouts: (results) => [results.readout],
  };
}
