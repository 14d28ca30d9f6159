/**
 * The SQL stage's table sources on Athena (issue 4, "analysis: Athena StartQueryExecution for the
 * SQL stage"): the Glue tables of infra/constructs/Analytics.ts filtered to one campaign, its phases
 * and models. The tables use `injected` partition projection for campaign_key, phase_key and model
 * (GLUE_PARTITION_KEYS), so every query must name their values. Same text as Analytics.ts
 * `tableSources` (test/functions/plan.test.ts compares them), without loading aws-cdk-lib into a
 * Lambda bundle.
 */
import { renderSql } from '../analysis/runSql.js';
import type { SqlName } from '../analysis/runSql.js';
import type { TableSources } from '../analysis/types.js';

/** The query the state machine's Athena step runs first: analyzeCampaign starts with the label maps. */
export const FIRST_SQL_QUERY: SqlName = 'label_maps';

function quote(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** Readings of a generate reply may come from the judge phase, so readings span both phases. */
export function athenaTableSources(database: string, campaign: string, models: readonly string[]): TableSources {
  const list = models.map(quote).join(', ');
  const from = (table: string, phases: readonly string[]): string =>
    `(SELECT * FROM "${database}"."${table}" WHERE campaign_key = ${quote(campaign)} AND phase_key IN (${phases.map(quote).join(', ')}) AND model IN (${list}))`;
  return {
    prompts: from('prompts', ['generate']),
    replies: from('replies', ['generate']),
    readings: from('readings', ['generate', 'judge']),
  };
}

/** The first SQL-stage query of a campaign, rendered for Athena (PlanOutput.analysis.queryString). */
export function athenaFirstQuery(database: string, campaign: string, models: readonly string[]): string {
  return renderSql(FIRST_SQL_QUERY, athenaTableSources(database, campaign, models));
}
