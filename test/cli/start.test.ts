import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SFNClient } from '@aws-sdk/client-sfn';
import { parse, stringify } from 'yaml';
import { campaignExecutions, executionName } from '../../lib/cli/aws.js';
import { REPO_ROOT, RUN_FIXTURES } from '../helpers/campaigns.js';
import type { CampaignDoc } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';
import { STACK, useAwsFakes } from '../helpers/awsFakes.js';

const aws = useAwsFakes('cli-start');
afterEach(() => {
  aws.s3.objects.clear();
  aws.sfn.executions.length = 0;
  aws.sfn.calls.clear();
});

/**
 * A campaign folder as a user has it: the campaign file, and its stories and concept pairs in a
 * subfolder, named relative to the campaign file.
 */
async function campaignFolder(name: string, edit: (doc: CampaignDoc) => void = () => {}): Promise<string> {
  const folder = path.join(aws.dir, name);
  await mkdir(path.join(folder, 'design'), { recursive: true });
  await copyFile(path.join(REPO_ROOT, 'examples/far6/stories.yaml'), path.join(folder, 'design/stories.yaml'));
  await copyFile(path.join(REPO_ROOT, 'examples/far6/concept-pairs.yaml'), path.join(folder, 'design/pairs.yaml'));
  const doc = parse(await readFile(path.join(RUN_FIXTURES, 'small.yaml'), 'utf8')) as CampaignDoc;
  doc['name'] = name;
  doc.design['stories'] = 'design/stories.yaml';
  doc.design['concept_pairs'] = './design/pairs.yaml';
  edit(doc);
  const file = path.join(folder, 'study.yaml');
  await writeFile(file, stringify(doc));
  return file;
}

describe('sondage start --aws', () => {
  it('refuses a campaign started before on a bucket and tables the stack no longer names (a cdk destroy kept them, a new deploy made empty ones), naming the retained ones', async () => {
    const file = await campaignFolder('start-redeployed');
    const first = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(first.code).toBe(0);
    const record = JSON.parse(await readFile(path.join(path.dirname(file), 'sondage.aws.campaigns.json'), 'utf8')) as Record<string, Record<string, string>>;
    expect(record['start-redeployed']).toEqual({ bucket: STACK.bucket, ledgerTable: STACK.ledgerTable, budgetTable: STACK.budgetTable });
    // prepare: the outputs of a stack destroyed and deployed again (new generated names)
    const outputs = JSON.parse(await readFile(aws.outputsFile, 'utf8')) as Record<string, Record<string, string>>;
    const [stackName] = Object.keys(outputs);
    const redeployed = path.join(path.dirname(file), 'redeployed.json');
    await writeFile(redeployed, JSON.stringify({ [stackName!]: { ...outputs[stackName!], BucketName: 'sondage-databucket-new', LedgerTableName: 'Sondage-Ledger-NEW' } }));
    const executions = aws.sfn.executions.length;
    // act
    const again = await runMain(['start', file, '--aws', '--outputs', redeployed]);
    // assess: refused, nothing started, the retained names given
    expect(again.code).not.toBe(0);
    expect(aws.sfn.executions).toHaveLength(executions);
    expect(again.stderr).toContain(`start-redeployed was started on bucket ${STACK.bucket}, ledger table ${STACK.ledgerTable} and budget table ${STACK.budgetTable}`);
    expect(again.stderr).toContain('the stack now names bucket sondage-databucket-new, ledgerTable Sondage-Ledger-NEW');
    expect(again.stderr).toContain('would ask, and pay for, every item again. Nothing was started');
  });

  it('uploads the campaign and exactly the files it names, then starts one execution with the campaign as input', async () => {
    const file = await campaignFolder('start-ok');
    // A file beside the campaign that it does not name stays here.
    await writeFile(path.join(path.dirname(file), 'notes.txt'), 'not named');
    const { code, stdout, stderr } = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(stderr).toBe('');
    expect(code).toBe(0);

    const uploaded = aws.objects();
    expect([...uploaded.keys()].sort()).toEqual([
      'campaigns/start-ok/input/campaign.yaml',
      'campaigns/start-ok/input/design/pairs.yaml',
      'campaigns/start-ok/input/design/stories.yaml',
    ]);
    expect(uploaded.get('campaigns/start-ok/input/campaign.yaml')).toBe(await readFile(file, 'utf8'));
    expect(uploaded.get('campaigns/start-ok/input/design/stories.yaml')).toBe(await readFile(path.join(REPO_ROOT, 'examples/far6/stories.yaml'), 'utf8'));

    expect(aws.sfn.executions).toHaveLength(1);
    const [execution] = aws.sfn.executions;
    expect(execution!.stateMachineArn).toBe(STACK.stateMachineArn);
    expect(JSON.parse(execution!.input)).toEqual({ campaign: 'start-ok' });
    expect(execution!.name).toMatch(/^start-ok-\d{8}T\d{9}Z$/);
    expect(stdout).toMatch(/^start-ok \(far6\): \d+ requests in 4 model × language partitions/);
    expect(stdout).toContain(`started ${execution!.executionArn}`);
    expect(stdout).toContain(`sondage status ${file} --aws`);
  });

  it('--retry-failed starts the execution with retryFailed in its input', async () => {
    const file = await campaignFolder('start-retry');
    const { code, stdout } = await runMain(['start', file, '--aws', '--retry-failed', '--outputs', aws.outputsFile]);
    expect(code).toBe(0);
    const mine = aws.sfn.executions.filter((e) => (JSON.parse(e.input) as { campaign: string }).campaign === 'start-retry');
    expect(mine.map((e) => JSON.parse(e.input) as unknown)).toEqual([{ campaign: 'start-retry', retryFailed: true }]);
    expect(stdout).toContain('(asking again the items that failed for good)');
  });

  it('--allow-partial above the budget starts the execution with allowPartial in its input; without it nothing starts', async () => {
    const file = await campaignFolder('start-partial', (doc) => {
      doc['budget_usd'] = 0.000001;
    });
    const refused = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--allow-partial');
    expect(aws.sfn.executions).toHaveLength(0);
    const { code, stdout } = await runMain(['start', file, '--aws', '--allow-partial', '--outputs', aws.outputsFile]);
    expect(code).toBe(0);
    expect(aws.sfn.executions.map((e) => JSON.parse(e.input) as unknown)).toEqual([{ campaign: 'start-partial', allowPartial: true }]);
    expect(stdout).toContain('(running until the budget cap)');
  });

  it('starts a campaign with a judge audit: its phases run on AWS like every other', async () => {
    const file = await campaignFolder('start-audit', (doc) => {
      (doc as { judge: Record<string, unknown> }).judge['audit'] = { per_stratum: 5 };
    });
    const { code, stderr } = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(code).toBe(0);
    expect(stderr).not.toContain('audit');
    expect(aws.sfn.executions.some((e) => JSON.parse(e.input).campaign === 'start-audit')).toBe(true);
  });

  it('a bad campaign uploads nothing and starts nothing', async () => {
    const file = await campaignFolder('start-bad', (doc) => {
      doc.models[0]!['provider'] = 'open-ai';
    });
    const { code, stderr } = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: models[0].provider`);
    expect(aws.objects().size).toBe(0);
    expect(aws.sfn.calls.get('StartExecution') ?? 0).toBe(0);
  });

  it('a broken stories file uploads nothing', async () => {
    const file = await campaignFolder('start-bad-stories');
    await writeFile(path.join(path.dirname(file), 'design/stories.yaml'), 'stories: [ { id: s1 ');
    const { code, stderr } = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(code).toBe(1);
    expect(stderr).toContain('design/stories.yaml');
    expect(aws.objects().size).toBe(0);
  });

  it('a named file outside the campaign folder is refused before anything is uploaded', async () => {
    const file = await campaignFolder('start-outside', (doc) => {
      doc.design['stories'] = path.join(REPO_ROOT, 'examples/far6/stories.yaml');
    });
    const { code, stderr } = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: design.stories:`);
    expect(stderr).toContain("is outside the campaign's folder");
    expect(aws.objects().size).toBe(0);
  });

  it('refuses a second execution while one runs; after a stop a new one starts and stale input is removed', async () => {
    const file = await campaignFolder('start-again');
    expect((await runMain(['start', file, '--aws', '--outputs', aws.outputsFile])).code).toBe(0);
    const again = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`start-again is already running: ${aws.sfn.executions[0]!.executionArn}`);
    expect(aws.sfn.executions).toHaveLength(1);

    aws.sfn.finish(aws.sfn.executions[0]!.executionArn, 'ABORTED');
    // A file an earlier upload named and this one does not is removed from the input.
    aws.s3.objects.set(`${STACK.bucket}/campaigns/start-again/input/old/stories.yaml`, Buffer.from('old'));
    // An execution of another campaign whose name starts the same is not this campaign's.
    aws.sfn.add(STACK.stateMachineArn, 'start-again-2-20261130T000000000Z', { campaign: 'start-again-2' });
    const resumed = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('(removed 1 no longer named)');
    expect([...aws.objects('campaigns/start-again/').keys()].sort()).toEqual([
      'campaigns/start-again/input/campaign.yaml',
      'campaigns/start-again/input/design/pairs.yaml',
      'campaigns/start-again/input/design/stories.yaml',
    ]);
    const mine = aws.sfn.executions.filter((e) => (JSON.parse(e.input) as { campaign: string }).campaign === 'start-again');
    expect(mine.map((e) => e.status)).toEqual(['ABORTED', 'RUNNING']);
  });

  it('long campaign names are cut to the 80 characters Step Functions allows, and told apart by the input', async () => {
    const long = 'a'.repeat(70);
    const name = executionName(`${long}-x`, new Date('2026-11-30T07:05:09.123Z'));
    expect(name).toBe(`${'a'.repeat(60)}-20261130T070509123Z`);
    expect(name).toHaveLength(80);
    aws.sfn.add(STACK.stateMachineArn, name, { campaign: `${long}-x` });
    aws.sfn.add(STACK.stateMachineArn, executionName(`${long}-y`, new Date('2026-11-30T07:05:10Z')), { campaign: `${long}-y` });
    const sfn = new SFNClient({});
    try {
      const found = await campaignExecutions(sfn, STACK.stateMachineArn, `${long}-x`);
      expect(found.map((e) => e.name)).toEqual([name]);
    } finally {
      sfn.destroy();
    }
  });

  it('a campaign name with dots starts an execution named with what Step Functions allows, told apart from the same name with underscores', async () => {
    const file = await campaignFolder('start.dots.v2');
    const { code, stderr } = await runMain(['start', file, '--aws', '--outputs', aws.outputsFile]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const [execution] = aws.sfn.executions;
    expect(JSON.parse(execution!.input)).toEqual({ campaign: 'start.dots.v2' });
    expect(execution!.name).toMatch(/^start_dots_v2-[0-9a-f]{8}-\d{8}T\d{9}Z$/);
    const at = new Date('2026-11-30T07:05:09.123Z');
    expect(executionName('start.dots.v2', at)).not.toBe(executionName('start_dots_v2', at));
    // the longest campaign name the CLI accepts (64), every character mapped, still fits 80
    const longest = executionName(`${'a.'.repeat(32)}`, at);
    expect(longest).toMatch(/^[A-Za-z0-9_-]{80}$/);
    const sfn = new SFNClient({});
    try {
      // status --aws and stop --aws find it by its name (and confirm by the input)
      expect((await campaignExecutions(sfn, STACK.stateMachineArn, 'start.dots.v2')).map((e) => e.name)).toEqual([execution!.name]);
      expect(await campaignExecutions(sfn, STACK.stateMachineArn, 'start_dots_v2')).toEqual([]);
    } finally {
      sfn.destroy();
    }
  });

  it('without --aws it says how to run it', async () => {
    const file = await campaignFolder('start-local');
    const { code, stderr } = await runMain(['start', file]);
    expect(code).toBe(1);
    expect(stderr).toContain('add --aws');
  });

  it('a missing outputs file is an error naming it and the flags that would do instead', async () => {
    const file = await campaignFolder('start-no-outputs');
    const missing = path.join(aws.dir, 'nope.json');
    const { code, stderr } = await runMain(['start', file, '--aws', '--outputs', missing]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${missing}: no such stack outputs file`);
    expect(stderr).toContain(`--outputs-file ${missing}`);
    expect(stderr).toContain('--bucket (or SONDAGE_BUCKET)');
    expect(stderr).toContain('--state-machine (or SONDAGE_STATE_MACHINE_ARN)');
    expect(aws.objects().size).toBe(0);
  });
});
