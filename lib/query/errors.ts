import { SondageError } from '../errors.js';

/** An analysis query failed in the database, or the SQL stage was asked for something it lacks. */
export class AnalysisError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AnalysisError';
  }
}
