/**
 * A Powertools logger and metrics that write into an array instead of the process's console, so
 * that a test can read what a handler logged and which metrics it emitted.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Metrics } from '@aws-lambda-powertools/metrics';

export interface CollectedPowertools {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Every line the two wrote, in order (log lines and EMF metric blobs alike). */
  readonly logs: string[];
}

/**
 * @param options.logLevel the logger's level (Powertools' own default when absent)
 * @param options.keepDebug collect debug lines too (they are dropped otherwise)
 * @param options.into the array to collect into (a new one when absent)
 * @example
 * const { logger, metrics, logs } = collectingPowertools({ logLevel: 'ERROR' });
 */
export function collectingPowertools(options: { serviceName?: string; logLevel?: LogLevel; keepDebug?: boolean; into?: string[] } = {}): CollectedPowertools {
  const serviceName = options.serviceName ?? 'test';
  const logs = options.into ?? [];
  const push = (l: string): void => {
    logs.push(l);
  };
  const sink = { error: push, info: push, log: push, warn: push, debug: options.keepDebug === true ? push : () => {}, trace: () => {} };
  const logger = new Logger({ serviceName, ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel }) });
  // Powertools writes to its console; collect the lines instead of printing them.
  Object.assign(logger as unknown as { console: unknown }, { console: sink });
  const metrics = new Metrics({ namespace: 'sondage-test', serviceName });
  Object.assign(metrics as unknown as { console: unknown }, { console: sink });
  return { logger, metrics, logs };
}
