/**
 * `sondage status --aws` after a provider reported more usage than its calls reserved: the
 * overrun the workers recorded on the DynamoDB budget (the model and the excess) and how far past
 * the cap spend went.
 */
import { describe, expect, it } from 'vitest';
import { useAwsFakes } from '../helpers/awsFakes.js';
import { runMain } from '../helpers/cli.js';

const aws = useAwsFakes('cli-status-overrun');

describe('status --aws after an overrun', () => {
  it('names the model that overran, by how much past its reservations, and how far spend is past the cap', async () => {
    // prepare: cap $2; a part reserved $0.10 and was billed $2.30 by model alpha, which the worker flagged
    const campaign = 'status-overrun';
    await aws.withLedger(async (ledger) => {
      await ledger.initCampaign(campaign, 2, 'exec-1');
      await ledger.registerItems(campaign, { phase: 'generate', model: 'alpha', language: 'en' }, ['g1']);
      expect(await ledger.reserve(campaign, 'call-1', 0.1, { phase: 'generate', model: 'alpha', language: 'en', itemIds: ['g1'] })).toBe(true);
      await ledger.commitPart({ campaign, phase: 'generate', model: 'alpha', language: 'en', partKey: 'part-1', done: ['g1'], failed: [], reservationIds: ['call-1'], costUsd: 2.3 });
      await ledger.flagOverrun(campaign, 'alpha', 2.2);
    });
    // act
    const { code, stdout, stderr } = await runMain(['status', campaign, '--aws', '--outputs', aws.outputsFile]);
    // assess
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('PAST THE CAP by $0.3000: alpha reported more usage than its calls reserved');
    expect(stdout).toMatch(/OVERRUN: alpha reported usage \$2\.2000 past what its calls reserved \(last at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\); every worker stopped at its next chunk/);
  });

  it('says nothing of an overrun where none was recorded', async () => {
    const campaign = 'status-no-overrun';
    await aws.withLedger((ledger) => ledger.initCampaign(campaign, 2, 'exec-1'));
    const { code, stdout } = await runMain(['status', campaign, '--aws', '--outputs', aws.outputsFile]);
    expect(code).toBe(0);
    expect(stdout).not.toContain('OVERRUN');
    expect(stdout).not.toContain('PAST THE CAP');
  });
});
