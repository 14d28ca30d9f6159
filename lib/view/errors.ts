import { SondageError } from '../errors.js';

/** A request for something the data folder does not hold (a campaign, a table, a phase, an item): 404, never a path. */
export class ViewNotFoundError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ViewNotFoundError';
  }
}
