/**
 * The synthesized state machine executed for real (the battery's phases
 * through the state machine path): the exact definition `cdk synth` writes, run by the test ASL interpreter, every
 * Lambda task answered by the real handler (plan, worker, report, record-failure) over the S3,
 * DynamoDB, Secrets Manager and Athena stand-ins, started with the input `sondage start --aws`
 * sends. Each campaign is also run locally (`runCampaign`, which analyses with `analyzeLocal`):
 * the result files the report handler writes must equal the local ones, and the accounting must
 * be exact — one successful reply per item, the ledger's spend the sum of the stored replies'
 * costs, nothing reserved or pending, spend within the cap.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_RETEST_PHASE, AUDIT_SECOND_PHASE } from '../../lib/batteries/far6/audit.js';
import { registerBattery } from '../../lib/batteries/index.js';
import type { WorkerEvent } from '../../lib/config/pipeline.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import type { RunSummary } from '../../lib/run/runCampaign.js';
import { layout } from '../../lib/store/index.js';
import { relay } from '../batteries/relay/relay.js';
import { loadContext, tempDir } from '../helpers/campaigns.js';
import { exampleCampaign, far6Campaign, plainCampaign } from '../helpers/pipeline/campaignFiles.js';
import { startPipeline } from '../helpers/pipeline/pipelineHarness.js';
import type { Accounting, Pipeline } from '../helpers/pipeline/pipelineHarness.js';
import { asRemote } from '../helpers/localSource.js';

let p: Pipeline;
let root: string;
let cleanup: () => Promise<void>;
const unregister: (() => void)[] = [];

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('pipeline-run'));
  unregister.push(registerBattery(relay));
  p = await startPipeline();
}, 60_000);

afterAll(async () => {
  await p?.close();
  for (const u of unregister) u();
  await cleanup();
});

interface Campaigned {
  readonly file: string;
  readonly name: string;
  readonly dataDir: string;
  readonly local: RunSummary;
}

/** A campaign folder under the test's root, the campaign written by `write`, run locally first. */
async function prepare(folder: string, write: (dir: string) => Promise<string>): Promise<Campaigned> {
  const dir = path.join(root, folder);
  await mkdir(dir, { recursive: true });
  const file = await write(dir);
  const ctx = await loadContext(file);
  const local = await runCampaign(ctx, { dataDir: ctx.dataDir });
  expect(local.stopped).toBeUndefined();
  return { file, name: ctx.campaign.name, dataDir: ctx.dataDir, local };
}

/** The local run's result files, by name. */
async function localResults(c: Campaigned): Promise<Map<string, string>> {
  const folder = path.join(c.dataDir, layout.campaignPrefix(c.name), 'results');
  const out = new Map<string, string>();
  for (const name of (await readdir(folder)).sort()) out.set(name, await readFile(path.join(folder, name), 'utf8'));
  return out;
}

/**
 * The report's files are the local run's, byte for byte once the source each names is the same
 * (the local data folder there, the bucket here), the simulated models' truth included.
 */
async function expectSameResults(c: Campaigned): Promise<string[]> {
  const aws = await p.results(c.name);
  const local = await localResults(c);
  const source = `s3://${p.standIns.names.bucket}/campaigns/${c.name}/`;
  expect([...aws.keys()].sort()).toEqual([...local.keys()].sort());
  for (const [name, text] of aws) {
    expect(text.length, name).toBeGreaterThan(0);
    expect(text === asRemote(local.get(name)!, c.name, source), `${name} differs from the local run's`).toBe(true);
  }
  return [...aws.keys()];
}

/** One ok reply per item of every phase, as many as the local run answered; spend = stored cost ≤ cap; nothing open. */
function expectExactAccounting(acc: Accounting, local: RunSummary): void {
  for (const summary of local.phases) {
    const phase = acc.phases[summary.phase]!;
    const repeated = [...phase.okPerItem].filter(([, n]) => n !== 1);
    expect(repeated, `${summary.phase}: items with more than one ok reply`).toEqual([]);
    expect(phase.okPerItem.size, `${summary.phase}: items answered`).toBe(summary.done);
    expect(phase.ledger, `${summary.phase}: ledger`).toEqual({ pending: 0, done: summary.done, failed: summary.failed });
  }
  expect(acc.budget.reserved_usd).toBeCloseTo(0, 12);
  expect(acc.budget.spent_usd).toBeCloseTo(acc.storedCostUsd, 12);
  expect(acc.budget.spent_usd).toBeCloseTo(local.spentUsd, 12);
  expect(acc.budget.spent_usd).toBeLessThanOrEqual(acc.budget.cap_usd);
}

/** The top-level states the execution went through, in order. */
function path_(run: Awaited<ReturnType<Pipeline['execute']>>): string[] {
  return run.history.filter((e) => e.type === 'StateEntered' && !e.path.includes('/')).map((e) => e.state);
}

describe('the synthesized state machine with the real handlers', () => {
  it('runs a small FAR-6 campaign with the judge audit wave by wave, and the report writes the local run\'s result files', async () => {
    // prepare: two languages, one story, two forms; a second judge and a retest on a sample of the judged replies
    const c = await prepare('far6', (dir) =>
      far6Campaign(dir, 'pipe-far6', (doc) => {
        doc.design['story_limit'] = 1;
        doc.design['forms'] = ['plain', 'negint'];
        doc.judge['simulation'] = { error_rate: 0.05 };
        doc.judge['audit'] = {
          per_stratum: 3,
          retest: true,
          second_judge: { id: 'judge-b', provider: 'simulated', model: 'judge-b', price: { input_per_mtok: 2, output_per_mtok: 8 }, simulation: { error_rate: 0.2 } },
        };
      }),
    );
    expect(c.local.phases.map((s) => s.phase)).toEqual(['generate', 'judge', AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE]);
    await p.upload(c.file);
    // act: the input `sondage start --aws` sends
    const run = await p.execute({ campaign: c.name });
    // assess: the run went plan → map → plan … → SQL → report, one wave per level of the phase graph
    expect(run.result).toMatchObject({ status: 'SUCCEEDED', output: { phasesRun: ['generate', 'judge', AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE] } });
    const wave = ['Plan wave', 'Every phase run?', 'Any Lambda shards?', "Run the wave's shards", 'Next wave'];
    expect(path_(run)).toEqual(['Retry failed given?', 'Retry failed: default false', 'Allow partial given?', 'Allow partial: default false', 'No phase run yet', ...wave, ...wave, ...wave, 'Plan wave', 'Every phase run?', 'SqlStep', 'Report: no round yet', 'Report', 'Analysis queries still running?', 'Done']);
    // the worker got WorkerEvents: the audit phases' shards in the third wave, side by side
    const events = p.fleet.of('worker').map((i) => i.payload as unknown as WorkerEvent);
    expect(events.every((e) => e.BatchInput.campaign === c.name && e.BatchInput.execution === run.name && e.BatchInput.retryFailed === false)).toBe(true);
    expect(new Set(events.flatMap((e) => e.Items.map((s) => s.phase)))).toEqual(new Set(['generate', 'judge', AUDIT_SECOND_PHASE, AUDIT_RETEST_PHASE]));
    // the report adopted the SQL step's query instead of running it again
    expect(p.fleet.logs.some((l) => l.includes('"report written"') && l.includes('"adoptedSqlStep":true'))).toBe(true);
    // assess: equal tables, judge_audit.csv among them; exact accounting
    expect(await expectSameResults(c)).toEqual(expect.arrayContaining(['story_scores.csv', 'judge_audit.csv', 'summary.md', 'report.html']));
    expectExactAccounting(await p.accounting(c.name, c.local.phases.map((s) => s.phase)), c.local);
  });

  it('runs the tests\' relay battery (registered at run time): its second phase built from the first\'s readings, its own SQL', async () => {
    const c = await prepare('relay', (dir) =>
      plainCampaign(dir, {
        name: 'pipe-relay',
        seed: 7,
        budget_usd: 1,
        battery: 'relay',
        design: { slots: 40 },
        models: [
          { id: 'exact', provider: 'simulated', model: 'exact', price: { input_per_mtok: 1, output_per_mtok: 1 } },
          { id: 'sloppy', provider: 'simulated', model: 'sloppy', price: { input_per_mtok: 1, output_per_mtok: 1 }, simulation: { error_rate: 0.25 } },
        ],
      }),
    );
    await p.upload(c.file);
    const run = await p.execute({ campaign: c.name });
    expect(run.result).toMatchObject({ status: 'SUCCEEDED', output: { phasesRun: ['guess', 'double'] } });
    expect(await expectSameResults(c)).toEqual(['relay.csv', 'summary.md']);
    expect((await p.results(c.name)).get('relay.csv')).toMatch(/^model,language,doubled,correct,accuracy\r?\nexact,en,40,40,1/);
    expectExactAccounting(await p.accounting(c.name, ['guess', 'double']), c.local);
  });

  it('runs the X-Value demo cut down (two languages, one pair a cell): the rubric chain\'s dependent steps, equal tables', async () => {
    const c = await prepare('xvalue', (dir) =>
      exampleCampaign(dir, 'xvalue', 'pipe-xvalue', ['qa-pairs.jsonl'], (doc) => {
        doc.design['languages'] = ['en', 'ja'];
        doc.design['per_cell'] = 1;
      }),
    );
    await p.upload(c.file);
    const run = await p.execute({ campaign: c.name });
    expect(run.result.status).toBe('SUCCEEDED');
    expect(await expectSameResults(c)).toEqual(expect.arrayContaining(['summary.md']));
    expectExactAccounting(await p.accounting(c.name, c.local.phases.map((s) => s.phase)), c.local);
  });

  it('runs the P(True) demo cut down (two languages, a few items): generate, verify in each verifier language, judge, equal tables', async () => {
    const c = await prepare('ptrue', (dir) =>
      exampleCampaign(dir, 'ptrue', 'pipe-ptrue', ['items.jsonl'], (doc) => {
        doc.design['languages'] = ['en', 'fr'];
        doc.design['verifier_languages'] = ['en', 'fr'];
        doc.design['item_limit'] = 1;
        (doc.design['analysis'] as Record<string, unknown>)['bootstrap_draws'] = 20;
      }),
    );
    await p.upload(c.file);
    const run = await p.execute({ campaign: c.name });
    expect(run.result.status).toBe('SUCCEEDED');
    expect(await expectSameResults(c)).toEqual(expect.arrayContaining(['summary.md']));
    expectExactAccounting(await p.accounting(c.name, c.local.phases.map((s) => s.phase)), c.local);
  });
});
