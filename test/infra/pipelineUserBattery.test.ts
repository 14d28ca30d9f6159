/**
 * The synthesized state machine executed with a battery of the user's own (`-c sondage:batteries`),
 * as test/infra/pipelineRun.test.ts executes it with the built-in ones: the definition `cdk synth`
 * writes, every Lambda task answered by the real handler over the S3, DynamoDB, Secrets Manager
 * and Athena stand-ins (the Athena stand-in reads the Glue tables the stack deploys, the
 * battery's prompts table among them), the campaign uploaded as `sondage start --aws` uploads it.
 * The report's files must be the local run's, and the accounting exact.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
// eslint-disable-next-line no-restricted-imports -- the pipeline tests execute the CDK app; lib/ still may not import it
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStackBatteries } from '../../infra/app.js';
import { CONTEXT } from '../../lib/config/index.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { layout } from '../../lib/store/index.js';
import { runMain } from '../helpers/cli.js';
import { loadContext, tempDir } from '../helpers/campaigns.js';
import { asRemote } from '../helpers/localSource.js';
import { startPipeline } from '../helpers/pipeline/pipelineHarness.js';
import type { Pipeline } from '../helpers/pipeline/pipelineHarness.js';

const NAME = 'tally';
let p: Pipeline;
let battery: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  let dir: string;
  ({ dir, cleanup } = await tempDir('pipeline-user-battery'));
  expect((await runMain(['new', 'battery', NAME, '--dir', dir])).code).toBe(0);
  battery = path.join(dir, NAME);
  const context = { [CONTEXT.batteries]: battery };
  // What infra/app.ts does before it builds the stack.
  await loadStackBatteries(new App({ context }));
  p = await startPipeline({ context });
}, 120_000);

afterAll(async () => {
  await p?.close();
  await cleanup();
});

describe('the synthesized state machine with a battery of the user\'s own', () => {
  it('runs the scaffolded battery wave by wave and the report writes the local run\'s result files', async () => {
    // prepare: the scaffold's campaign, two repeats instead of ten, run locally first
    const file = path.join(battery, 'campaign.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/repeats: 10\b/, 'repeats: 2'));
    const ctx = await loadContext(file);
    const local = await runCampaign(ctx, { dataDir: ctx.dataDir });
    expect(local.stopped).toBeUndefined();
    const campaign = ctx.campaign.name;
    await p.upload(file);
    // act: the input `sondage start --aws` sends
    const run = await p.execute({ campaign });
    // assess: the battery's phase ran, its analysis went through the SQL step and the report
    expect(run.result).toMatchObject({ status: 'SUCCEEDED', output: { phasesRun: ['answer'] } });
    const aws = await p.results(campaign);
    const folder = path.join(ctx.dataDir, layout.campaignPrefix(campaign), 'results');
    const names = (await readdir(folder)).sort();
    expect([...aws.keys()].sort()).toEqual(names);
    expect(names).toEqual(['report.html', 'scores.csv', 'simulation_truth.json', 'summary.md']);
    expect(aws.get('scores.csv')).toMatch(/^careful,en,/m);
    const source = `s3://${p.standIns.names.bucket}/campaigns/${campaign}/`;
    for (const name of names) {
      const text = await readFile(path.join(folder, name), 'utf8');
      expect(aws.get(name) === asRemote(text, campaign, source), `${name} differs from the local run's`).toBe(true);
    }
    // exact accounting: one ok reply per item, the spend the stored cost, nothing left reserved
    const acc = await p.accounting(campaign, ['answer']);
    const phase = acc.phases['answer']!;
    expect([...phase.okPerItem.values()].every((n) => n === 1)).toBe(true);
    expect(phase.okPerItem.size).toBe(local.phases[0]!.done);
    expect(phase.ledger).toEqual({ pending: 0, done: local.phases[0]!.done, failed: 0 });
    expect(acc.budget.reserved_usd).toBeCloseTo(0, 12);
    expect(acc.budget.spent_usd).toBeCloseTo(acc.storedCostUsd, 12);
    expect(acc.budget.spent_usd).toBeCloseTo(local.spentUsd, 12);
  });
});
