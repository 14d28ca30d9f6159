import { packInOrder } from '../core/packInOrder.js';
import { SondageError } from '../errors.js';
import type { BatchLimits } from './batchTypes.js';

/**
 * Splits requests into batches within a provider's documented limits (requests and bytes per
 * batch), keeping their order. `sizeOf` is an item's size on the wire in bytes.
 * @throws SondageError when a single item is larger than a whole batch may be.
 */
export function splitBatch<T>(items: readonly T[], sizeOf: (item: T) => number, limits: BatchLimits): T[][] {
  return packInOrder(
    items,
    (item) => {
      const size = sizeOf(item);
      if (size > limits.maxBytes) throw new SondageError(`a batch request of ${size} bytes exceeds the provider's batch size limit of ${limits.maxBytes} bytes`);
      return size;
    },
    limits.maxBytes,
    limits.maxRequests,
  );
}
