import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import { startAthenaServer } from '../helpers/athenaServer.js';
import type { AthenaServer } from '../helpers/athenaServer.js';
import { loadContext, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';
import { filesUnder, readResult } from '../helpers/runData.js';
import { startS3Server } from '../store/s3Server.js';
import type { S3Server } from '../store/s3Server.js';
import { asRemote } from '../helpers/localSource.js';

// `sondage results <campaign>` runs the analysis through Athena; tested against S3 and
// Athena servers on 127.0.0.1, its table and files compared with the local run of the same data.

const CAMPAIGN = 'run-small';
const DATABASE = 'sondage_cli';
const WORKGROUP = 'sondage-cli';
const BUCKET = 'cli-data';

let dir: string;
let dataDir: string;
let campaignFile: string;
let cleanup: () => Promise<void>;
let s3: S3Server;
let athena: AthenaServer;
let localTable: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('results'));
  campaignFile = await writeCampaign(dir, 'small.yaml', (doc) => {
    doc.design['forms'] = ['plain', 'negint'];
  });
  dataDir = path.join(dir, 'data');
  const summary = await runCampaign(await loadContext(campaignFile), { dataDir });
  expect(summary.stopped).toBeUndefined();
  localTable = summary.table ?? '';
  expect(localTable).not.toBe('');
  s3 = await startS3Server();
  const store = new S3BlobStore({
    bucket: BUCKET,
    clientConfig: { endpoint: s3.url, region: 'us-east-1', credentials: { accessKeyId: 't', secretAccessKey: 't' }, forcePathStyle: true },
  });
  for (const f of await filesUnder(path.join(dataDir, 'campaigns', CAMPAIGN), (n) => n.endsWith('.parquet'))) {
    await store.put(path.relative(dataDir, f).split(path.sep).join('/'), await readFile(f));
  }
  // The campaign as `sondage start --aws` uploads it: `results <name>` reads its battery from it.
  await store.put(`campaigns/${CAMPAIGN}/input/campaign.yaml`, await readFile(campaignFile));
  // Queries answer at the first poll: the command polls with real waits.
  athena = await startAthenaServer({ dataDir, database: DATABASE, workgroups: [WORKGROUP], pollsBeforeDone: 0 });
}, 60_000);

afterAll(async () => {
  await athena?.close();
  await s3?.close();
  await cleanup();
});

/** The SDK's own settings, as a user would export them for LocalStack. */
function awsEnv(extra: Record<string, string> = {}): void {
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('AWS_MAX_ATTEMPTS', '1');
  vi.stubEnv('AWS_ENDPOINT_URL_S3', s3.url);
  for (const [k, v] of Object.entries(extra)) vi.stubEnv(k, v);
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('sondage results', () => {
  it('prints the local run\'s table and writes its result files, from the SQL stage on Athena', async () => {
    // prepare
    awsEnv();
    const out = path.join(dir, 'out-flags');
    // act
    const { code, stdout, stderr } = await runMain([
      'results', CAMPAIGN, '--athena-endpoint', athena.url, '--workgroup', WORKGROUP, '--database', DATABASE, '--bucket', BUCKET, '--out', out,
    ]);
    // assess
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.startsWith(`${localTable}\n`)).toBe(true);
    expect(stdout).toMatch(new RegExp(`athena: \\d+ queries in workgroup ${WORKGROUP}, database ${DATABASE} \\(models alpha, beta\\)`));
    expect(stdout).toContain(`results: ${out}\n`);
    const written = (await filesUnder(out)).map((f) => path.relative(out, f));
    expect(written).toEqual(expect.arrayContaining(['story_scores.csv', 'readout_convergence.csv', 'cell_habits.csv', 'summary.md']));
    const source = `s3://${BUCKET}/campaigns/${CAMPAIGN}/`;
    for (const name of written) {
      const mine = await readFile(path.join(out, name), 'utf8');
      const local = await readResult(dataDir, CAMPAIGN, name);
      expect(mine === asRemote(local, CAMPAIGN, source), `${name} differs from the local run's`).toBe(true);
    }
  });

  it('takes the names from the stack outputs file and the campaign from its file, the endpoint from the SDK variable', async () => {
    awsEnv({ AWS_ENDPOINT_URL_ATHENA: athena.url });
    const outputs = path.join(dir, 'stack.json');
    await writeFile(outputs, JSON.stringify({ Other: { Foo: 'x' }, Sondage: { BucketName: BUCKET, AthenaWorkgroup: WORKGROUP, GlueDatabase: DATABASE, StateMachineArn: 'arn:x' } }));
    const before = athena.executions.size;
    const { code, stdout, stderr } = await runMain(['results', campaignFile, '--outputs', outputs]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.startsWith(`${localTable}\n`)).toBe(true);
    expect(stdout).toContain(`results: add --out DIR to write the files here; the pipeline's report step writes them to s3://${BUCKET}/campaigns/${CAMPAIGN}/results/`);
    // The repeated queries asked for result reuse and were answered from the first command's runs.
    const again = [...athena.executions.values()].slice(before);
    expect(again.length).toBeGreaterThan(0);
    expect(again.filter((e) => !e.reused)).toEqual([]);
  });

  it('names the outputs file and the flags when the stack names are missing', async () => {
    awsEnv();
    const missing = path.join(dir, 'nope.json');
    const { code, stderr } = await runMain(['results', CAMPAIGN, '--workgroup', WORKGROUP, '--outputs', missing]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${missing}: no such stack outputs file; write it with \`npx cdk deploy --outputs-file ${missing}\``);
    expect(stderr).toContain('--bucket (or SONDAGE_BUCKET), --database (or SONDAGE_GLUE_DATABASE)');
  });

  it('fails naming the analysis query and Athena\'s reason', async () => {
    awsEnv({ SONDAGE_BUCKET: BUCKET, SONDAGE_ATHENA_WORKGROUP: WORKGROUP, SONDAGE_GLUE_DATABASE: DATABASE });
    athena.failNext('FAILED', 'HIVE_BAD_DATA: Field cost_usd type INT64 in parquet is incompatible with type double');
    const { code, stderr } = await runMain(['results', CAMPAIGN, '--athena-endpoint', athena.url]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^analysis query label_maps\.sql failed: Athena query q-\d+ FAILED: HIVE_BAD_DATA: Field cost_usd/);
  });

  it('refuses --out that is a file before any Athena query runs (queries are paid for)', async () => {
    awsEnv();
    const out = path.join(dir, 'results.txt');
    await writeFile(out, 'mine');
    const before = athena.executions.size;
    const { code, stderr } = await runMain(['results', CAMPAIGN, '--athena-endpoint', athena.url, '--workgroup', WORKGROUP, '--database', DATABASE, '--bucket', BUCKET, '--out', out]);
    expect(code).toBe(1);
    expect(stderr).toBe(`--out ${out}: is a file, not a folder; expected a folder you can write in, for the result files\n`);
    expect(athena.executions.size).toBe(before);
    expect(await readFile(out, 'utf8')).toBe('mine');
  });

  it('refuses a campaign id that cannot name a folder', async () => {
    awsEnv();
    const { code, stderr } = await runMain(['results', 'a/b', '--athena-endpoint', athena.url]);
    expect(code).toBe(1);
    expect(stderr).toContain('campaign id "a/b" is not a safe path segment');
  });
});
