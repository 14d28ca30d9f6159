/**
 * How much of a partition a batch run asks synchronously, at the on-demand price: the items a
 * provider with a minimum per batch (Bedrock: 100 records per job) would refuse in a batch of their
 * own. runBatchPartition sends them through the model's direct call; `sondage plan` prices them so.
 */
import type { BatchLimits } from '../providers/batchTypes.js';

/**
 * Of a partition of `n` items sent through a batch API with `limits`, how many go synchronously:
 * all of them when they are fewer than the minimum, else the last piece of the split (batches of
 * `maxRequests`) when it is under the minimum. 0 for a provider without a minimum. The split by
 * bytes is not foreseen here (a Bedrock job holds 1 GB: far more prompts than 50,000 records).
 * @example itemsBelowBatchMinimum(40, BEDROCK_BATCH_LIMITS) // 40
 * @example itemsBelowBatchMinimum(50_030, BEDROCK_BATCH_LIMITS) // 30
 */
export function itemsBelowBatchMinimum(n: number, limits: BatchLimits | undefined): number {
  const min = limits?.minRequests ?? 0;
  if (limits === undefined || n <= 0 || min <= 0) return 0;
  if (n < min) return n;
  const last = n % limits.maxRequests;
  return last > 0 && last < min ? last : 0;
}
