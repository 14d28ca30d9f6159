/**
 * The state machine's plan step (issue 4). Placeholder while the real handler is written: it fails
 * loudly rather than returning a plan it did not make.
 */
import type { Context } from 'aws-lambda';
import type { PlanOutput } from '../../lib/config/pipeline.js';
import { SondageError } from '../../lib/errors.js';

export const handler = async (_event: unknown, _context: Context): Promise<PlanOutput> => {
  throw new SondageError('plan handler: not built yet');
};
