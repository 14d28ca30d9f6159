/** Base of every error sondage throws on purpose. Failed model calls are data, not exceptions. */
export class SondageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SondageError';
  }
}

/**
 * A campaign file, or a data file it names, is wrong. The message names the file, the path
 * inside it, what was expected and what was found.
 */
export class CampaignFileError extends SondageError {
  constructor(
    message: string,
    public readonly issues: readonly FileIssue[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CampaignFileError';
  }
}

export interface FileIssue {
  readonly file: string;
  /** Path inside the file, e.g. `models[2].provider`. */
  readonly path: string;
  readonly message: string;
}

/** Formats issues as one line each: `demo.yaml: models[2].provider: ...`. */
export function formatIssues(issues: readonly FileIssue[]): string {
  return issues.map((i) => `${i.file}: ${i.path ? `${i.path}: ` : ''}${i.message}`).join('\n');
}

export class ProviderError extends SondageError {
  constructor(
    message: string,
    public readonly provider: string,
    public readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}

/** The campaign budget cannot cover what a plan or a call would cost. */
export class BudgetError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BudgetError';
  }
}
