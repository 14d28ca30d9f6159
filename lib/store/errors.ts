import { SondageError } from '../errors.js';

/** Another live run holds the campaign's run lock. */
export class RunLockedError extends SondageError {
  constructor(
    message: string,
    public readonly lockPath: string,
    public readonly holderPid: number | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'RunLockedError';
  }
}

/** A part file was committed to the ledger before: adopting it again would count its items twice. */
export class PartCommittedError extends SondageError {
  constructor(
    message: string,
    public readonly partKey: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'PartCommittedError';
  }
}

/** `sondage purge`: nothing of the campaign was found where it was looked for. */
export class UnknownCampaignError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UnknownCampaignError';
  }
}

/** `sondage purge`: the campaign is running (a local run holds its lock, or an execution runs), so nothing was deleted. */
export class CampaignBusyError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CampaignBusyError';
  }
}
