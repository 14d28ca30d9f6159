/**
 * The state machine's worker step (issue 4). Placeholder while the real handler is written: it fails
 * loudly rather than reporting work it did not do.
 */
import type { Context } from 'aws-lambda';
import type { WorkerOutput } from '../../lib/config/pipeline.js';
import { SondageError } from '../../lib/errors.js';

export const handler = async (_event: unknown, _context: Context): Promise<WorkerOutput> => {
  throw new SondageError('worker handler: not built yet');
};
