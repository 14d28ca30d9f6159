/**
 * The spend metrics behind the "spend near the cap" alarm and the dashboard's spend widgets
 * (infra/constructs/Operations.ts): the campaign's spend, its cap and their ratio, read from the
 * budget table after a worker invocation or a GPU job attempt (functions/gpu/spendMetrics.ts). They go out with the invocation's other metrics, under
 * the `campaign` dimension the handler has set.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { SPEND_METRICS } from '../../lib/config/index.js';
import type { Ledger } from '../../lib/store/types.js';

/**
 * Adds `SpentUsd`, `CapUsd` and `SpentShareOfCap` ((spent + possibly billed) / cap: what may
 * already be owed, killed runs' calls included; left out when the cap is 0) for
 * `campaign`. A budget that cannot be read is logged, not thrown: the invocation's work is
 * committed by then, and a missing data point only leaves the alarm where it was.
 * @example await addSpendMetrics(deps.metrics, ledger, 'demo', deps.logger);
 */
export async function addSpendMetrics(
  metrics: Metrics,
  ledger: Pick<Ledger, 'budget'>,
  campaign: string,
  // Powertools' Logger on Lambda, the GPU job's JSON-lines log in its container.
  logger: { warn(message: string, fields: Record<string, unknown>): void },
): Promise<void> {
  let budget;
  try {
    budget = await ledger.budget(campaign);
  } catch (err) {
    logger.warn('spend metrics not published: the budget could not be read', { campaign, error: (err as Error).name ?? 'Error' });
    return;
  }
  const owed = budget.spent_usd + budget.possibly_billed_usd;
  metrics.addMetric(SPEND_METRICS.spent, MetricUnit.NoUnit, owed);
  metrics.addMetric(SPEND_METRICS.cap, MetricUnit.NoUnit, budget.cap_usd);
  if (budget.cap_usd > 0) metrics.addMetric(SPEND_METRICS.share, MetricUnit.NoUnit, owed / budget.cap_usd);
}
