/**
 * `sondage status` never prints "failures: none" beside a table that counts failed items, and the
 * failures line names what it lists (items not done whose last attempt failed), not "failed items"
 * that the table would count as pending.
 */
import { describe, expect, it } from 'vitest';
import { formatStatus, type CampaignStatus } from '../../lib/cli/commands/status.js';

const base: CampaignStatus = {
  campaign: 'c',
  where: 'local data',
  run: 'not running',
  phases: [{ phase: 'generate', done: 10, failed: 0, inFlight: 0, pending: 0 }],
  openBatches: [],
  failures: [],
  failuresTotal: 0,
  failuresKind: 'items not done whose last attempt failed (last error of each)',
};

describe('the failures line of sondage status', () => {
  it('says none only when the table counts no failed item', () => {
    expect(formatStatus(base)).toContain('failures: none\n');
    const failed = formatStatus({ ...base, phases: [{ phase: 'generate', done: 2, failed: 8, inFlight: 0, pending: 0 }] });
    expect(failed).not.toContain('failures: none');
    expect(failed).toContain('failures: 8 failed item(s) in the table above, none with a stored error');
  });

  it('names errors of items pending again (after a stop) as what they are', () => {
    const text = formatStatus({
      ...base,
      phases: [{ phase: 'generate', done: 2, failed: 0, inFlight: 0, pending: 8 }],
      failures: [{ at: '2026-12-04T05:00:00.000Z', where: 'generate m/en i1', error: 'rate_limit', cause: 'slow down' }],
      failuresTotal: 8,
    });
    expect(text).toContain('failures: 8 items not done whose last attempt failed (last error of each), last 1:');
    expect(text).not.toMatch(/\d+ failed items/);
  });
});
