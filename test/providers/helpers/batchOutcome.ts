import type { BatchItemResult } from '../../../lib/providers/batchTypes.js';

/** A batch result in a word: 'ok', or its error class and whether re-queuing can help ('server_error/true'). */
export function outcome(r: BatchItemResult): string {
  return r.ok ? 'ok' : `${r.errorClass}/${r.retryable}`;
}

/** Each result's custom id with its outcome, in the order the client returned them. */
export function outcomes(results: readonly BatchItemResult[]): [string, string][] {
  return results.map((r) => [r.customId, outcome(r)]);
}
