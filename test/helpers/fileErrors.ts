/** The CampaignFileError a call throws, for tests on bad input files. */
import { expect } from 'vitest';
import { CampaignFileError } from '../../lib/errors.js';

/**
 * Runs `fn` and returns the CampaignFileError it throws; fails the test when it throws anything
 * else or nothing.
 *
 * @example
 * const issues = campaignFileError(() => parseItems(text, 'items.jsonl', 'jsonl', LANGS)).issues;
 */
export function campaignFileError(fn: () => unknown): CampaignFileError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CampaignFileError);
    return err as CampaignFileError;
  }
  throw new Error('expected a CampaignFileError');
}
