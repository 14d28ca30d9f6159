import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { ExecutionFailure } from '../../lib/store/DynamoLedger.js';
import type { BlobStore, Ledger } from '../../lib/store/types.js';

/** What every campaign handler is built over: tests pass stores on local servers. */
export interface HandlerDeps {
  /** The data bucket (S3BlobStore on AWS). */
  readonly store: BlobStore;
  /** A ledger whose reservations carry `runId` (DynamoLedger on AWS); the handler closes nothing it did not open. */
  ledgerFor(runId: string): Ledger;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Local scratch folder (Lambda: /tmp); campaign files, journals and downloaded parts go under it. */
  readonly tmpDir: string;
  /**
   * Puts the provider keys into process.env before any provider is built: read from Secrets Manager
   * at the first call of each execution (named), a minute after the last read, and after `forgetKeys`.
   */
  loadKeys(execution?: string): Promise<void>;
  /** The next loadKeys reads the secret again: a provider rejected a key (it may have been fixed since). */
  forgetKeys?(): void;
  /**
   * Records a failure that `sondage status --aws` shows (DynamoLedger.recordFailure): what the
   * worker hits but should not fail the Map for, such as a rejected provider key.
   */
  recordFailure(failure: ExecutionFailure): Promise<void>;
}
