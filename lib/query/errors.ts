import { SondageError } from '../errors.js';

/** An analysis query failed in the database, or the SQL stage was asked for something it lacks. */
export class AnalysisError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AnalysisError';
  }
}

/**
 * A query still running when its database may wait no longer (the report Lambda near its
 * deadline, lib/store/AthenaQueryable.ts `resume`): not a failure; the analysis is run again later
 * and finds the query where it left it.
 */
export class QueryStillRunning extends SondageError {
  /** The analysis query's file (`item_shares.sql`), set by the SQL stage that ran it. */
  query: string | undefined;

  constructor(
    message: string,
    public readonly queryExecutionId: string,
    public readonly state: string,
    /** The first statement line of the query, for messages when no file name is known. */
    public readonly excerpt: string,
  ) {
    super(message);
    this.name = 'QueryStillRunning';
  }
}

/**
 * What the SQL stage throws when `file`'s query did not answer: a query still running passes
 * through, named (it is not a failure); anything else becomes an AnalysisError naming the query,
 * with the original as cause.
 */
export function analysisQueryError(file: string, err: unknown): Error {
  if (err instanceof QueryStillRunning) {
    err.query ??= file;
    return err;
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new AnalysisError(`analysis query ${file} failed: ${detail}`, { cause: err });
}
