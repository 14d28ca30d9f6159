/**
 * What a value is once it crosses a state boundary: a JSON copy, at most 256 KiB (Step Functions
 * service quotas, "maximum input or output size for a task, state, or execution"). Over it, the
 * state fails with States.DataLimitExceeded, which nothing catches.
 */
import { StatesError } from './errors.js';
import type { Json } from './types.js';

/** Step Functions' quota on a state's input and output, in bytes of UTF-8 JSON. */
export const PAYLOAD_LIMIT_BYTES = 256 * 1024;

/** States.DataLimitExceeded when a value is over the quota. */
export function checkPayloadSize(value: Json, what: string): void {
  const n = Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
  if (n > PAYLOAD_LIMIT_BYTES) throw new StatesError('States.DataLimitExceeded', `${what} is ${n} bytes, over the ${PAYLOAD_LIMIT_BYTES}-byte quota`, { terminal: true });
}

/** A JSON copy, as a value is after crossing a state boundary. */
export function roundTrip(value: Json): Json {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}
