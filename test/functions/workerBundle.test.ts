import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunction, linkSdk } from '../../bench/lambda-bundles.js';
import { handler as planHandler } from '../../functions/plan/handler.js';
import type { Shard } from '../../lib/config/pipeline.js';
import { FUNCTION_SIZING } from '../../lib/config/sizing.js';
import { DuckDb, sqlString } from '../../lib/store/DuckDb.js';
import { narrowDesign } from '../helpers/campaigns.js';
import { SECRET_ARN, lambdaContext, stackEnv, startHarness, uploadCampaign, type Harness, readShards } from './harness.js';

// The worker's deployed bundle (esbuild, as the Handler construct bundles it) runs a
// shard in a node process of its own, from a folder holding only the bundle and the SDK the Lambda
// runtime provides: no DuckDB anywhere it could resolve it, so a part written or read through
// DuckDB, or a static import left in the bundle, fails this test.

const run = promisify(execFile);
let h: Harness;
let out: string;

const INVOKE = `
const { handler } = await import(process.env.BUNDLE_URL);
const left = 15 * 60_000;
const context = { functionName: 'worker', awsRequestId: 'req-bundle', invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:worker', getRemainingTimeInMillis: () => left };
const result = await handler(JSON.parse(process.env.EVENT), context);
let duckdb = true;
try { await import('@duckdb/node-api'); } catch { duckdb = false; }
console.log(JSON.stringify({ result, duckdb }));
`;

beforeAll(async () => {
  h = await startHarness();
  h.secrets.secrets.set(SECRET_ARN, JSON.stringify({ SONDAGE_TEST_ENTRY_KEY: 'sk-test-entry-0123456789' }));
  out = mkdtempSync(path.join(tmpdir(), 'sondage-worker-bundle-'));
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await h.close();
});

describe('the bundled worker', () => {
  it('runs a shard without DuckDB: replies stored as Parquet, committed in the ledger', async () => {
    // prepare: the campaign planned by the plan handler (in this process, with DuckDB)
    const env = {
      ...stackEnv(h),
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      TMPDIR: h.deps().tmpDir,
    };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    let shards: Shard[];
    try {
      await uploadCampaign(h.store, 'bundled', (doc) => {
        narrowDesign(doc, { forms: ['plain'], constraints: ['label'], stories: 1 });
        doc.models = doc.models.slice(0, 1);
      });
      const planned = await planHandler({ campaign: 'bundled', execution: 'exec-bundle' }, lambdaContext());
      shards = await readShards(h.store, planned.wave.lambda.manifestKey);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    const bundle = await bundleFunction('worker', FUNCTION_SIZING.worker, path.join(out, 'worker'));
    linkSdk(bundle.dir);
    // act: a node of its own, in the bundle's folder (asynchronously: the stand-ins answer from this process)
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', INVOKE], {
      cwd: bundle.dir,
      env: { ...env, PATH: process.env['PATH'] ?? '', BUNDLE_URL: pathToFileURL(path.join(bundle.dir, 'index.mjs')).href, EVENT: JSON.stringify({ Items: shards, BatchInput: { campaign: 'bundled', execution: 'exec-bundle' } }) },
    });
    // assess
    const { result, duckdb } = JSON.parse(stdout.trim().split('\n').pop()!) as { result: { done: number; pending: number; again: boolean }; duckdb: boolean };
    expect(duckdb).toBe(false);
    expect(result).toMatchObject({ pending: 0, again: false });
    expect(result.done).toBeGreaterThan(0);
    expect(await h.ledger.counts('bundled', 'generate')).toEqual({ pending: 0, done: result.done, failed: 0 });
    const parts = (await h.store.list('campaigns/bundled/generate/replies/')).filter((k) => k.endsWith('.parquet'));
    expect(parts.length).toBeGreaterThan(0);
    // DuckDB (what the report and the local analysis read with) reads the JS-written parts: one ok reply per item
    let rows = 0;
    const db = await DuckDb.open({ threads: 1 });
    try {
      for (const [i, key] of parts.entries()) {
        const file = path.join(out, `part-${i}.parquet`);
        writeFileSync(file, (await h.store.get(key))!);
        const [n] = await db.all<{ n: number; ok: number }>(`SELECT count(*) AS n, count(*) FILTER (WHERE status = 'ok') AS ok FROM read_parquet(${sqlString(file)})`);
        expect(n!.ok).toBe(n!.n);
        rows += n!.n;
      }
    } finally {
      db.close();
    }
    expect(rows).toBe(result.done);
  });
});
