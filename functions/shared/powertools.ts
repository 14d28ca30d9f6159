import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE } from '../../lib/config/index.js';

/**
 * A handler's Powertools logger and metrics, built once per container: service `sondage-<name>`
 * (the `service` dimension the operations layer reads, WORKER_SERVICE for the worker) in the
 * METRICS_NAMESPACE namespace.
 * @example createHandler({ ...stores, ...powertools('plan') })
 */
export function powertools(name: string): { readonly logger: Logger; readonly metrics: Metrics } {
  const serviceName = `sondage-${name}`;
  return { logger: new Logger({ serviceName }), metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName }) };
}
