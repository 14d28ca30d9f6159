/**
 * The state machine's report step (issue 4): the statistics and the report of a campaign, from the
 * SQL stage on Athena, written to S3. Payload: lib/config/pipeline.ts ReportEvent → ReportOutput.
 */
import type { Context } from 'aws-lambda';
import type { ReportEvent, ReportOutput } from '../../lib/config/pipeline.js';
import { SondageError } from '../../lib/errors.js';

/** The Lambda entry point (being written: fails loudly until then). */
export const handler = (event: ReportEvent, _context: Context): Promise<ReportOutput> =>
  Promise.reject(new SondageError(`report handler is not built yet (campaign ${event.campaign})`));
