import { SondageError } from '../errors.js';
import type { BatchLimits } from './batchTypes.js';

/**
 * Splits requests into batches within a provider's documented limits (requests and bytes per
 * batch), keeping their order. `sizeOf` is an item's size on the wire in bytes.
 * @throws SondageError when a single item is larger than a whole batch may be.
 */
export function splitBatch<T>(items: readonly T[], sizeOf: (item: T) => number, limits: BatchLimits): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (size > limits.maxBytes) throw new SondageError(`a batch request of ${size} bytes exceeds the provider's batch size limit of ${limits.maxBytes} bytes`);
    if (current.length > 0 && (current.length >= limits.maxRequests || bytes + size > limits.maxBytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}
