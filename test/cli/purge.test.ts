import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileSizes } from '../helpers/runData.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { executionName } from '../../lib/cli/aws.js';
import { PURGE_USAGE, purgeCommand } from '../../lib/cli/commands/purge.js';
import type { PurgeIo } from '../../lib/cli/commands/purge.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { EmbeddedLedger, LocalBlobStore, acquireRunLock } from '../../lib/store/index.js';
import type { BlobStore, Ledger } from '../../lib/store/types.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import { STACK, useAwsFakes } from '../helpers/awsFakes.js';
import { loadContext, writeCampaign } from '../helpers/campaigns.js';
import type { CampaignDoc } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

const aws = useAwsFakes('cli-purge');
let dataDir: string;
/** Campaign files of the two campaigns run for real into `dataDir`. */
const files: Record<string, string> = {};

/** One language, one form, one constraint, one story, one model: a run of a few seconds. */
const tiny = (name: string) => (doc: CampaignDoc) => {
  doc['name'] = name;
  doc.design['languages'] = ['en'];
  doc.design['forms'] = ['plain'];
  doc.design['constraints'] = ['yesno'];
  doc.design['story_limit'] = 1;
  doc.models = doc.models.slice(0, 1);
};

beforeAll(async () => {
  for (const name of ['p-one', 'p-two']) {
    files[name] = await writeCampaign(aws.dir, 'small.yaml', tiny(name), `${name}.yaml`);
    await runCampaign(await loadContext(files[name]!), {});
  }
  dataDir = path.join(aws.dir, 'data');
});

const tree = fileSizes;

async function ledgerState(campaign: string): Promise<unknown> {
  const ledger = new EmbeddedLedger(dataDir);
  try {
    return { budget: await ledger.budget(campaign).catch(() => undefined), generate: await ledger.counts(campaign, 'generate'), judge: await ledger.counts(campaign, 'judge') };
  } finally {
    await ledger.close();
  }
}

/** A campaign with a budget, items, a part and its files: enough to purge, without a run. */
async function craft(store: BlobStore, ledger: Ledger, campaign: string): Promise<void> {
  await ledger.initCampaign(campaign, 3, 'run-1');
  await ledger.registerItems(campaign, { phase: 'generate', model: 'm', language: 'en' }, ['a', 'b']);
  await ledger.commitPart({ campaign, phase: 'generate', model: 'm', language: 'en', partKey: 'part-1.parquet', done: ['a'], failed: [], costUsd: 0.01 });
  await store.put(`campaigns/${campaign}/generate/replies/model=m/language=en/part-1.parquet`, 'x'.repeat(2048));
  await store.put(`campaigns/${campaign}/input/campaign.yaml`, `name: ${campaign}\n`);
}

async function craftLocal(campaign: string): Promise<void> {
  const ledger = new EmbeddedLedger(dataDir);
  try {
    await craft(new LocalBlobStore(dataDir), ledger, campaign);
  } finally {
    await ledger.close();
  }
}

const answering = (answer: string, asked: string[] = []): PurgeIo => ({ interactive: true, ask: async (q) => (asked.push(q), answer) });

/** purgeCommand with an io of the test's, stdout and stderr captured as runMain does. */
async function runPurge(argv: string[], io: PurgeIo): Promise<{ code: number; stdout: string; stderr: string }> {
  const { vi } = await import('vitest');
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(((s: string) => ((stdout += s), true)) as typeof process.stdout.write);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(((s: string) => ((stderr += s), true)) as typeof process.stderr.write);
  try {
    return { code: await purgeCommand(argv, io), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('sondage purge (this machine)', () => {
  it("deletes one campaign's folder and ledger rows after showing them; the other campaign in the same data dir is untouched", async () => {
    // prepare
    const one = path.join(dataDir, 'campaigns', 'p-one');
    const twoBefore = tree(path.join(dataDir, 'campaigns', 'p-two'));
    const twoLedger = await ledgerState('p-two');
    expect(Object.keys(tree(one)).some((f) => f.includes(`generate${path.sep}replies`))).toBe(true);
    expect(Object.keys(tree(one)).some((f) => f.startsWith('results'))).toBe(true);
    expect(await ledgerState('p-one')).toMatchObject({ budget: { cap_usd: 5 } });
    // act
    const { code, stdout, stderr } = await runMain(['purge', 'p-one', '--data-dir', dataDir, '--yes']);
    // assess
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`sondage purge p-one (this machine) deletes:\n  ${one}${path.sep}\n`);
    expect(stdout).toMatch(/ {4}files in generate\/ +\d+ {2}\(\d/);
    expect(stdout).toMatch(new RegExp(`  ${path.join(dataDir, 'ledger.sqlite').replace(/[.\\]/g, '\\$&')}\\n {4}budget \\(cap and spend\\) +1\\n`));
    expect(stdout).toMatch(/ {4}item states +\d+/);
    expect(stdout).toContain('purged campaign "p-one":');
    expect(existsSync(one)).toBe(false);
    expect(await ledgerState('p-one')).toEqual({ budget: undefined, generate: { pending: 0, done: 0, failed: 0 }, judge: { pending: 0, done: 0, failed: 0 } });
    expect(tree(path.join(dataDir, 'campaigns', 'p-two'))).toEqual(twoBefore);
    expect(await ledgerState('p-two')).toEqual(twoLedger);
    // a second purge finds nothing; the campaign file still names it, and runs it again from the start
    const again = await runMain(['purge', files['p-one']!, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('campaign "p-one" has nothing to purge: nothing in ');
  });

  it('refuses while a run holds the campaign, and deletes nothing', async () => {
    const twoBefore = tree(path.join(dataDir, 'campaigns', 'p-two'));
    const lock = await acquireRunLock(dataDir, 'p-two', 'run-live');
    try {
      const { code, stdout, stderr } = await runMain(['purge', files['p-two']!, '--yes']);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toMatch(new RegExp(`^nothing purged: campaign "p-two" is already running in process ${process.pid} \\(run run-live, since .*\\); stop it first`));
    } finally {
      await lock.release();
    }
    expect(tree(path.join(dataDir, 'campaigns', 'p-two'))).toEqual({ ...twoBefore });
  });

  it('asks y/N, deletes nothing unless the answer is yes, and without a terminal asks for --yes', async () => {
    await craftLocal('p-ask');
    const folder = path.join(dataDir, 'campaigns', 'p-ask');
    const before = tree(folder);
    // no terminal, no --yes (vitest's stdin is not a TTY)
    const piped = await runMain(['purge', 'p-ask', '--data-dir', dataDir]);
    expect(piped.code).toBe(1);
    expect(piped.stdout).toContain('sondage purge p-ask (this machine) deletes:');
    expect(piped.stderr).toContain('nothing deleted: standard input is not a terminal, so there is no one to ask; add --yes');
    // answered no (or just Enter)
    for (const answer of ['n', '', 'maybe']) {
      const asked: string[] = [];
      const no = await runPurge(['p-ask', '--data-dir', dataDir], answering(answer, asked));
      expect(no.code).toBe(1);
      expect(no.stdout).toMatch(/files in generate\/ +1 {2}\(2\.0 kB\)/);
      expect(no.stdout).toContain('nothing deleted\n');
      expect(asked).toEqual(['Delete all of it? It cannot be undone. [y/N] ']);
      expect(tree(folder)).toEqual(before);
    }
    // answered yes
    const yes = await runPurge(['p-ask', '--data-dir', dataDir], answering('y'));
    expect(yes.code).toBe(0);
    expect(existsSync(folder)).toBe(false);
  });

  it.each([
    [['purge', 'nobody', '--data-dir', 'DATA', '--yes'], 'campaign "nobody" has nothing to purge: nothing in '],
    [['purge', '../p-two', '--data-dir', 'DATA', '--yes'], '"../p-two" is neither a campaign file nor a campaign name; a name has only letters, digits'],
    [['purge', 'p/two', '--data-dir', 'DATA', '--yes'], '"p/two" is neither a campaign file nor a campaign name'],
    [['purge', '..', '--data-dir', 'DATA', '--yes'], '".." is neither a campaign file nor a campaign name'],
    [['purge', 'no-such-file.yaml', '--yes'], 'no-such-file.yaml'],
    [['purge', 'p-two', '--yes'], 'sondage purge p-two: give the campaign file, or --data-dir with the name'],
    [['purge', '--yes'], 'sondage purge: missing the campaign name or file'],
    [['purge', 'p-two', 'p-one', '--data-dir', 'DATA'], 'sondage purge: one campaign at a time (got p-two, p-one)'],
    [['purge', 'p-two', '--force'], "sondage purge: Unknown option '--force'"],
    [['purge', 'p-two', '--aws', '--data-dir', 'DATA'], '--data-dir is for this machine; with --aws the data is in the stack'],
  ])('refuses bad input with a clear error: %j', async (argv, message) => {
    const before = tree(path.join(dataDir, 'campaigns'));
    const { code, stdout, stderr } = await runMain(argv.map((a) => (a === 'DATA' ? dataDir : a)));
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(message);
    expect(stderr).not.toMatch(/^\s+at /m); // no stack trace
    expect(tree(path.join(dataDir, 'campaigns'))).toEqual(before);
    expect(existsSync(path.join(dataDir, 'campaigns', 'nobody'))).toBe(false);
  });

  it('--help prints what it deletes and its options', async () => {
    const { code, stdout } = await runMain(['purge', '--help']);
    expect(code).toBe(0);
    expect(stdout).toBe(PURGE_USAGE);
    expect(stdout).toContain('sondage purge <campaign> --aws [--yes]');
  });
});

describe('sondage purge --aws', () => {
  const store = (): S3BlobStore => new S3BlobStore({ bucket: STACK.bucket, clientConfig: { endpoint: aws.s3.url, region: 'us-east-1', forcePathStyle: true } });
  const itemsOf = (campaign: string): string[] =>
    [STACK.ledgerTable, STACK.budgetTable].flatMap((t) => aws.dynamo.items(t).map((i) => JSON.stringify(i))).filter((i) => new RegExp(`"(\\w+#)?${campaign}(#[^"]*)?"`).test(i));

  it('refuses while an execution runs or its workers may still write, then deletes exactly that campaign', async () => {
    // prepare: two campaigns on the stack
    const ledger = aws.ledger();
    for (const c of ['a-one', 'a-two']) await craft(store(), ledger, c);
    await ledger.close();
    const twoObjects = aws.objects('campaigns/a-two/');
    const twoItems = itemsOf('a-two');
    expect(itemsOf('a-one').length).toBeGreaterThan(3);
    const run = aws.sfn.add(STACK.stateMachineArn, executionName('a-one', new Date('2026-11-30T05:00:00Z')), { campaign: 'a-one' });
    const args = ['purge', 'a-one', '--aws', '--outputs', aws.outputsFile, '--yes'];

    // act + assess: running
    const running = await runMain(args);
    expect(running.code).toBe(1);
    expect(running.stderr).toContain(`nothing purged: campaign "a-one" has a running execution (${run.name}, started `);
    expect(running.stderr).toContain('stop it with `sondage stop a-one --aws`');
    // stopped a minute ago: workers invoked before the stop may still commit
    run.status = 'ABORTED';
    run.stopDate = Math.floor(Date.now() / 1000) - 60;
    const justStopped = await runMain(args);
    expect(justStopped.code).toBe(1);
    expect(justStopped.stderr).toMatch(/nothing purged: the last execution of "a-one" \(.*\) ended ABORTED at .*, and workers it had invoked may still be writing until .*; purge again after that/);
    expect(aws.objects('campaigns/a-one/').size).toBe(2);

    // stopped an hour ago
    run.stopDate = Math.floor(Date.now() / 1000) - 3600;
    const { code, stdout, stderr } = await runMain(args);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`sondage purge a-one (the deployed stack) deletes:\n  s3://${STACK.bucket}/campaigns/a-one/\n    objects  2  (2.1 kB)\n`);
    expect(stdout).toContain(`  DynamoDB tables ${STACK.ledgerTable} and ${STACK.budgetTable}\n`);
    expect(stdout).toMatch(/ledger: item states +2\n/);
    expect(stdout).toContain('Step Functions keeps the executions\' history');
    expect(aws.objects('campaigns/a-one/').size).toBe(0);
    expect(itemsOf('a-one')).toEqual([]);
    expect(aws.objects('campaigns/a-two/')).toEqual(twoObjects);
    expect(itemsOf('a-two')).toEqual(twoItems);
  });

  it('says plainly when the stack holds nothing of the campaign', async () => {
    const { code, stderr } = await runMain(['purge', 'a-nobody', '--aws', '--outputs', aws.outputsFile, '--yes']);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `campaign "a-nobody" has nothing to purge: nothing in s3://${STACK.bucket}/campaigns/a-nobody/, nor in DynamoDB tables ${STACK.ledgerTable} and ${STACK.budgetTable}; check the name`,
    );
  });
});
