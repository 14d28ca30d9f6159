/**
 * After a stop, `run`'s per-phase lines and `sondage status` agree on what is pending: the
 * partitions the stopped run never reached and the phases it never started count too.
 */
import { describe, expect, it } from 'vitest';
import { runMain } from '../helpers/cli.js';
import { useTempDir, writeCampaign } from '../helpers/campaigns.js';

const tmp = useTempDir('stop-counts', 'all');

describe('pending after a stop', () => {
  it('run and status give the same pending count for every phase', async () => {
    // A cap far below the plan: the run stops at it with most of generate, and all of judge, left.
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc['budget_usd'] = 0.02;
      doc.concurrency = 2;
    });
    const run = await runMain(['run', file, '--quiet', '--allow-partial']);
    expect(run.code).toBe(3);
    const status = await runMain(['status', file]);
    expect(status.code).toBe(0);
    const fromStatus = new Map(
      [...status.stdout.matchAll(/^(generate|judge)\s+(\d+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s/gm)].map((m) => [m[1]!, Number(m[5]) + Number(m[4])]),
    );
    expect(fromStatus.get('generate')).toBeGreaterThan(0);
    for (const [phase, pending] of fromStatus) {
      const line = new RegExp(`^${phase}: (?:.*, (\\d+) pending, \\$|not started, (\\d+) pending)`, 'm').exec(run.stderr);
      expect(line, `${phase} in:\n${run.stderr}`).not.toBeNull();
      expect(Number(line![1] ?? line![2])).toBe(pending);
    }
  }, 120_000);
});
