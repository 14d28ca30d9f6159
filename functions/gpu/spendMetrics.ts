/**
 * The GPU job's CloudWatch metrics, as embedded-metric-format lines on stdout (the awslogs driver
 * sends them to CloudWatch Logs, which turns them into metrics): after each attempt settles, the
 * instance time it was charged, and the campaign's spend, cap and share (functions/shared/spend.ts,
 * read from the budget table, API calls and GPU time together), under the `campaign` dimension and
 * the GPU_SERVICE `service`. The spend alarm (infra/constructs/Operations.ts) reads the share from
 * every service, so a campaign spending on GPUs alone still trips it.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { GPU_METRICS, GPU_SERVICE, METRICS_NAMESPACE } from '../../lib/config/index.js';
import type { JobLog } from '../../lib/gpu/probeJob.js';
import { addSpendMetrics } from '../shared/spend.js';
import type { GpuSpend } from './job.js';

/**
 * Publishes one attempt's spend; `metrics` makes the Metrics object (tests collect its lines).
 * @example publishSpend: gpuSpendPublisher(log)
 */
export function gpuSpendPublisher(log: JobLog, metrics: () => Metrics = () => new Metrics({ namespace: METRICS_NAMESPACE, serviceName: GPU_SERVICE })): (spend: GpuSpend) => Promise<void> {
  return async (spend) => {
    const m = metrics();
    m.addDimension('campaign', spend.campaign);
    m.addMetric(GPU_METRICS.seconds, MetricUnit.Seconds, spend.seconds);
    m.addMetric(GPU_METRICS.usd, MetricUnit.NoUnit, spend.usd);
    await addSpendMetrics(m, spend.ledger, spend.campaign, log);
    m.publishStoredMetrics();
  };
}
