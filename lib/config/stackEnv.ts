import { SondageError } from '../errors.js';

/**
 * The JSON value of an environment variable that the stack sets as JSON (ENV.gpuQueues,
 * ENV.bedrockBatch); undefined when it is unset or empty. Text that is not JSON is a deployment
 * mistake, named with the handler that read it; what the value must hold, the caller checks.
 * @example stackEnvJson('plan', ENV.gpuQueues, process.env[ENV.gpuQueues])
 */
export function stackEnvJson(handler: string, name: string, value: string | undefined): unknown {
  if (value === undefined || value === '') return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch (err) {
    throw new SondageError(`${handler}: ${name} is not JSON (the stack sets it): ${(err as Error).message}`, { cause: err });
  }
}
