/**
 * FAR-6's analysis as the core runs it (Same Judgment, Different Yes "Estimation steps"): the SQL stage over the
 * generate phase's tables, the estimators, and the judge audit over the generate and audit
 * readings; the result files of report/.
 */
import type { AnalysisSources, BatteryAnalysis, TableSources } from '../../api/battery.js';
import { analyzeCampaign } from './analysis/analyzeCampaign.js';
import type { AnalysisResults } from './analysis/types.js';
import type { Far6DesignSpec } from './design.js';
import { AUDIT_RETEST_PHASE, AUDIT_SECOND_PHASE } from './audit.js';
import { judgeReaderId } from './read/index.js';
import { formatConsoleTable, resultFiles } from './report/report.js';
import { FAR6_SQL } from './sqlLibrary.js';

/** The tables every query reads: the generate phase's prompts, replies, and readings (rule readings and the judge's). */
function generateTables(sources: AnalysisSources): TableSources {
  return {
    prompts: sources.table('prompts', ['generate']),
    replies: sources.table('replies', ['generate']),
    readings: sources.table('readings', ['generate']),
  };
}

export const far6Analysis: BatteryAnalysis<AnalysisResults> = {
  sql: FAR6_SQL,
  namedSources: {
    prompts: { table: 'prompts', phases: ['generate'] },
    replies: { table: 'replies', phases: ['generate'] },
    readings: { table: 'readings', phases: ['generate'] },
  },
  firstQuery: (sources) => FAR6_SQL.render('label_maps', generateTables(sources)),
  async run(db, sources, ctx) {
    // The judge audit reads the generate readings and the audit phases' readings as one table
    // (their `phase` column tells them apart); only audit phases that stored something count.
    const audits: string[] = [];
    for (const phase of [AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE]) if (await sources.has('readings', phase)) audits.push(phase);
    const judge = ctx.campaign?.roles['judge'];
    const judgeAudit =
      audits.length > 0 && (await sources.has('readings', 'generate'))
        ? { readings: sources.table('readings', ['generate', ...audits]), ...(judge ? { primaryReader: judgeReaderId(judge.id) } : {}) }
        : undefined;
    // The design's analysis choices (replies brought from elsewhere have no design: the defaults).
    const choices = (ctx.design as Far6DesignSpec | undefined)?.analysis;
    // Settings given for this analysis (`analyze --replies … --draws --seed`) over the design's.
    const draws = ctx.bootstrap?.draws ?? choices?.bootstrap_draws;
    return analyzeCampaign(db, generateTables(sources), {
      ...(choices ? { identityReadouts: choices.identity_readouts } : {}),
      ...(draws !== undefined ? { bootstrapDraws: draws } : {}),
      ...(ctx.bootstrap?.seed !== undefined ? { bootstrapSeed: ctx.bootstrap.seed } : {}),
      ...(judgeAudit ? { judgeAudit } : {}),
    });
  },
  files: resultFiles,
  console: formatConsoleTable,
  simulated: (results) => results.simulated,
};
