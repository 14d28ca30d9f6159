import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { METRICS_NAMESPACE, WORKER_SERVICE } from '../../lib/config/index.js';
import { powertools } from '../../functions/shared/powertools.js';

describe('powertools: a handler\'s logger and metrics', () => {
  it('publish in the sondage namespace under service sondage-<name>; the worker\'s is the service the alarms read', () => {
    const { metrics } = powertools('worker');
    metrics.addMetric('Probe', MetricUnit.Count, 1);
    const emf = metrics.serializeMetrics();
    expect(emf._aws.CloudWatchMetrics[0]?.Namespace).toBe(METRICS_NAMESPACE);
    expect((emf as unknown as Record<string, unknown>).service).toBe(WORKER_SERVICE);
    metrics.clearMetrics();
  });
});
