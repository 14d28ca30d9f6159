import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir, writeCampaign } from '../helpers/campaigns.js';
import { exited, runMain, spawnCli } from '../helpers/cli.js';
import { ledgerSnapshot } from '../helpers/runData.js';

// `sondage run` refuses a campaign whose expected cost passes its budget unless told
// --allow-partial, and then stops at the cap; unknown commands and options are usage errors.

const tmp = useTempDir('cli-cmd');

const overBudget = () =>
  writeCampaign(tmp.dir, 'small.yaml', (doc) => {
    doc.budget_usd = 0.05;
  });

describe('sondage run and the budget', () => {
  it('refuses to start when the expected cost exceeds budget_usd, and writes nothing', async () => {
    const file = await overBudget();

    const { code, stderr, stdout } = await runMain(['run', file, '--quiet']);

    expect(code).toBe(1);
    expect(stderr).toMatch(/run-small: the expected cost \$\d+\.\d{4} exceeds budget_usd \$0\.05; raise budget_usd, shrink the design, or pass --allow-partial/);
    expect(stdout).toBe('');
    expect(await readdir(tmp.dir)).toEqual(['campaign.yaml']);
  });

  it('with --allow-partial runs until the cap and exits 3', async () => {
    const file = await overBudget();
    const dataDir = path.join(tmp.dir, 'out');

    const { code, stderr } = await runMain(['run', file, '--data-dir', dataDir, '--allow-partial', '--quiet']);

    expect(code).toBe(3);
    expect(stderr).toContain('stopped at the budget cap: raise budget_usd and run again to collect the rest');
    const ledger = await ledgerSnapshot(dataDir, 'run-small');
    expect(ledger.budget.spent_usd).toBeGreaterThan(0);
    expect(ledger.budget.spent_usd).toBeLessThanOrEqual(0.05 + 1e-12);
    expect(ledger.budget.reserved_usd).toBe(0);
    expect(ledger.generate.pending).toBeGreaterThan(0);
    // --data-dir wins over the file's data_dir.
    expect((await readdir(tmp.dir)).sort()).toEqual(['campaign.yaml', 'out']);
  });
});

describe('usage errors', () => {
  it('an unknown command exits 2 and prints the usage', async () => {
    const { code, stderr } = await runMain(['frobnicate', 'x.yaml']);
    expect(code).toBe(2);
    expect(stderr).toContain('sondage: unknown command "frobnicate"');
    expect(stderr).toContain('Usage:');
  });

  it('a missing campaign file argument or an unknown option exits 1', async () => {
    const missing = await runMain(['run']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('sondage: missing the campaign file');

    const file = await writeCampaign(tmp.dir, 'small.yaml');
    const option = await runMain(['plan', file, '--dry']);
    expect(option.code).toBe(1);
    expect(option.stderr).toContain("Unknown option '--dry'");
    expect(await readdir(tmp.dir)).toEqual(['campaign.yaml']);
  });

  it('a campaign file that does not exist exits 1 naming it', async () => {
    const file = path.join(tmp.dir, 'nope.yaml');
    const { code, stderr } = await runMain(['run', file]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: no such campaign file; check the path`);
    expect(await readdir(tmp.dir)).toEqual([]);
  });

  it('help exits 0 with the usage on stdout; no command exits 1 with it on stderr, where errors go', async () => {
    const help = await runMain(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('sondage run <campaign.yaml>');
    const none = await runMain([]);
    expect(none.code).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^sondage: no command given\n\n[\s\S]*Usage:/);
  });

  it('the real binary: an unknown command exits 2', async () => {
    const child = spawnCli(['frobnicate']);
    expect(await exited(child)).toBe(2);
    expect(child.output().stderr).toContain('sondage: unknown command "frobnicate"');
  });
});
