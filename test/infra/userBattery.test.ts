/**
 * A battery of the user's own on AWS: `-c sondage:batteries=<folder>` makes the CDK app load it,
 * deploy its prompts table and its SQL as named queries, and compile it into the functions'
 * bundles (a generated entry registers it at cold start; its SQL files go beside the bundles that
 * query). Proven by synthesis, and by the worker bundle `cdk synth` writes, run in a node process
 * of its own against the S3, DynamoDB and Secrets Manager stand-ins: that process has the battery
 * only from its bundle, and the campaign as `sondage start --aws` uploads it names it by name.
 * test/infra/pipelineUserBattery.test.ts executes the state machine with it.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { App, Stack } from 'aws-cdk-lib';
// eslint-disable-next-line no-restricted-imports -- as above
import { Match, Template } from 'aws-cdk-lib/assertions';
// eslint-disable-next-line no-restricted-imports -- as above
import { BUNDLING_STACKS } from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkSdk } from '../../bench/lambda-bundles.js';
import { handler as planHandler } from '../../functions/plan/handler.js';
import { buildApp, loadStackBatteries, stackBatterySources } from '../../infra/app.js';
import { duckdbPackages, Handler, loadedBatteriesToBundle } from '../../infra/constructs/Handler.js';
import { campaignInputFiles } from '../../lib/cli/commands/start.js';
import type { Shard } from '../../lib/config/pipeline.js';
import { CONTEXT } from '../../lib/config/index.js';
import { FUNCTION_SIZING } from '../../lib/config/sizing.js';
import { loadRunContext } from '../../lib/run/context.js';
import { runMain } from '../helpers/cli.js';
import { REPO_ROOT, tempDir } from '../helpers/campaigns.js';
import { SECRET_ARN, lambdaContext, stackEnv, startHarness, type Harness } from '../functions/harness.js';

const run = promisify(execFile);
const NAME = 'tally';

let dir: string;
let battery: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('user-battery-aws'));
  // The scaffold, as a researcher gets it: outside the repository, no node_modules of its own.
  expect((await runMain(['new', 'battery', NAME, '--dir', dir])).code).toBe(0);
  battery = path.join(dir, NAME);
  await loadStackBatteries(new App({ context: { [CONTEXT.batteries]: battery } }));
}, 60_000);
afterAll(() => cleanup());

describe('-c sondage:batteries', () => {
  it('deploys the battery beside the built-in ones: its prompts table with its own columns, each of its queries as a named query', () => {
    // act
    const app = new App({ context: { [BUNDLING_STACKS]: [], [CONTEXT.batteries]: battery } });
    const template = Template.fromStack(buildApp(app, { nag: false }).stack);
    // assess
    template.hasResourceProperties('AWS::Glue::Table', {
      TableInput: Match.objectLike({ Name: `${NAME}_prompts`, StorageDescriptor: Match.objectLike({ Columns: Match.arrayWith([{ Name: 'question', Type: 'string' }, { Name: 'answer', Type: 'int' }]) }) }),
    });
    for (const q of [`${NAME}_scores`, `${NAME}_simulated`]) {
      template.hasResourceProperties('AWS::Athena::NamedQuery', { Name: `sondage-${NAME}-${q}`, QueryString: Match.stringLikeRegexp("phase_key IN \\('answer'\\)") });
    }
    template.hasResourceProperties('AWS::Athena::NamedQuery', { Name: 'sondage-far6-cell_summary' });
  }, 300_000); // a whole synth: ~50 s of CPU, longer on a shared machine

  it('takes paths separated by commas or a JSON array, and refuses a bare name and a battery the app has not loaded', () => {
    const sources = (value: unknown) => stackBatterySources(new App({ context: { [CONTEXT.batteries]: value } }), '/lab');
    expect(sources('./a/, ./b/')).toEqual([{ path: '/lab/a' }, { path: '/lab/b' }]);
    expect(sources('["./a/", {"module": "@lab/likert"}]')).toEqual([{ path: '/lab/a' }, { module: '@lab/likert', from: '/lab' }]);
    expect(sources(['./a/'])).toEqual([{ path: '/lab/a' }]);
    expect(() => sources('likert')).toThrow('-c sondage:batteries[0]: "likert" is a battery name; the built-in batteries are always deployed, name a battery of your own by its folder (./likert/)');
    expect(() => sources('[./a/')).toThrow(/-c sondage:batteries: not a JSON array/);
    const app = new App({ context: { [BUNDLING_STACKS]: [], [CONTEXT.batteries]: path.join(dir, 'elsewhere.mjs') } });
    expect(() => buildApp(app, { nag: false })).toThrow(/battery .*elsewhere\.mjs: no such file or folder/);
  });

  it('copies the battery\'s SQL beside the bundles that query', () => {
    const [bundled] = loadedBatteriesToBundle();
    expect(bundled).toMatchObject({ name: NAME, file: path.join(battery, 'index.mjs') });
    expect(bundled!.sqlFiles.map((f) => path.basename(f)).sort()).toEqual([`${NAME}_scores.sql`, `${NAME}_simulated.sql`]);
  });
});

const hostArch = process.arch === 'arm64' ? 'arm64' : 'x86_64';
const nativeInstalled = existsSync(path.join(REPO_ROOT, 'node_modules', duckdbPackages(hostArch)[2]!));

/** The asset folder `cdk synth` writes for one Handler with the loaded batteries, bundled for real. */
function synthesizedAsset(id: string, name: string, sizing: (typeof FUNCTION_SIZING)[keyof typeof FUNCTION_SIZING]): string {
  const app = new App({ outdir: path.join(dir, `cdk.out.${id}`) });
  const stack = new Stack(app, `Bundle${id}`);
  new Handler(stack, id, { name, description: 'user battery bundling test', sizing, environment: {} });
  const assembly = app.synth();
  const assets = readdirSync(assembly.directory).filter((f) => f.startsWith('asset.'));
  expect(assets).toHaveLength(1);
  return path.join(assembly.directory, assets[0]!);
}

describe.runIf(process.platform === 'linux')('the functions as `cdk synth` bundles them', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.secrets.secrets.set(SECRET_ARN, JSON.stringify({}));
  });
  afterAll(() => h?.close());

  it('the worker bundle carries the battery: in a process of its own it runs the campaign\'s shards, which name the battery by name only', async () => {
    // prepare: the campaign uploaded as `sondage start --aws` uploads it, planned by the plan handler in this process
    const ctx = await loadRunContext(path.join(battery, 'campaign.yaml'));
    const campaign = ctx.campaign.name;
    const files = await campaignInputFiles(ctx.campaign, ctx.battery);
    for (const f of files) await h.store.put(f.key, f.body ?? readFileSync(f.local));
    const uploaded = Buffer.from((await h.store.get(`campaigns/${campaign}/input/campaign.yaml`))!).toString('utf8');
    expect(uploaded).toMatch(new RegExp(`^battery: ${NAME}\\b`, 'm'));
    expect(uploaded).toContain('# A campaign of the tally battery');
    const env = { ...stackEnv(h), POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', TMPDIR: h.deps().tmpDir };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    let shards: Shard[];
    try {
      const planned = await planHandler({ campaign, execution: 'exec-user-battery' }, lambdaContext());
      shards = JSON.parse(Buffer.from((await h.store.get(planned.wave.lambda.manifestKey))!).toString('utf8')) as Shard[];
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    // act: the Worker construct bundled for real, run from its asset folder
    const asset = synthesizedAsset('Worker', 'worker', FUNCTION_SIZING.worker);
    expect(readdirSync(asset)).toEqual(['index.mjs']);
    linkSdk(asset);
    const invoke = [
      'const { handler } = await import(process.env.BUNDLE_URL);',
      "const context = { functionName: 'worker', awsRequestId: 'req-user', invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:worker', getRemainingTimeInMillis: () => 900000 };",
      'console.log(JSON.stringify(await handler(JSON.parse(process.env.EVENT), context)));',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', invoke], {
      cwd: asset,
      env: { ...env, PATH: process.env['PATH'] ?? '', BUNDLE_URL: pathToFileURL(path.join(asset, 'index.mjs')).href, EVENT: JSON.stringify({ Items: shards, BatchInput: { campaign, execution: 'exec-user-battery' } }) },
    });
    // assess: every item of the shards answered and committed
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as { done: number; pending: number; again: boolean };
    const items = shards.reduce((n, s) => n + s.end - s.start, 0);
    expect(result).toMatchObject({ done: items, pending: 0, again: false });
    expect(items).toBe(ctx.campaign.models.length * 2 * 20 * 10);
    expect(await h.ledger.counts(campaign, 'answer')).toEqual({ pending: 0, done: items, failed: 0 });
  }, 300_000);

  it.runIf(nativeInstalled && hostArch === FUNCTION_SIZING.report.architecture)('the report bundle has the battery\'s SQL files beside the built-in ones', () => {
    const asset = synthesizedAsset('Report', 'report', FUNCTION_SIZING.report);
    const sql = readdirSync(path.join(asset, 'sql'));
    expect(sql).toEqual(expect.arrayContaining([`${NAME}_scores.sql`, `${NAME}_simulated.sql`, 'chosen_replies.sql', 'cell_summary.sql']));
    expect(readFileSync(path.join(asset, 'sql', `${NAME}_scores.sql`), 'utf8')).toBe(readFileSync(path.join(battery, 'sql', `${NAME}_scores.sql`), 'utf8'));
    const code = readFileSync(path.join(asset, 'index.mjs'), 'utf8');
    expect(code).toContain('design.items: no such file (expected questions'); // the scaffold battery's own words
  }, 300_000);
});
