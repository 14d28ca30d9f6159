import { SondageError } from '../../../api/battery.js';

/**
 * A FAR-6 design handed to the expansion is inconsistent (a campaign language without concept
 * pairs, a pair without the forms its templates need). Files are checked earlier, with
 * CampaignFileError; this guards callers that build designs in code.
 */
export class Far6DesignError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'Far6DesignError';
  }
}
