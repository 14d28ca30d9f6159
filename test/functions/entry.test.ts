import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as planHandler } from '../../functions/plan/handler.js';
import { handler as workerHandler } from '../../functions/worker/handler.js';
import { narrowDesign } from '../helpers/campaigns.js';
import { SECRET_ARN, lambdaContext, stackEnv, startHarness, uploadCampaign, type Harness, readShards } from './harness.js';

let h: Harness;
const saved = new Map<string, string | undefined>();
function setEnv(values: Record<string, string>): void {
  for (const [k, v] of Object.entries(values)) {
    if (!saved.has(k)) saved.set(k, process.env[k]);
    process.env[k] = v;
  }
}
beforeAll(async () => {
  h = await startHarness();
  h.secrets.secrets.set(SECRET_ARN, JSON.stringify({ SONDAGE_TEST_ENTRY_KEY: 'sk-test-entry-0123456789' }));
  // What the stack sets on the functions, with the endpoints pointed at the local servers.
  setEnv({
    ...stackEnv(h),
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
    // Lambda's /tmp: the harness's folder, removed with it.
    TMPDIR: h.deps().tmpDir,
  });
});
afterAll(async () => {
  for (const [k, v] of saved) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  delete process.env['SONDAGE_TEST_ENTRY_KEY'];
  await h.close();
});

describe('Lambda entry points', () => {
  it('build the bucket, ledger and keys from the environment the stack sets, and run a plan and a shard', async () => {
    // prepare
    await uploadCampaign(h.store, 'entry', (doc) => {
      narrowDesign(doc, { forms: ['plain'], constraints: ['label'], stories: 1 });
      doc.models = doc.models.slice(0, 1);
    });
    // act
    const planned = await planHandler({ campaign: 'entry', execution: 'exec-env' }, lambdaContext());
    const shards = await readShards(h.store, planned.wave.lambda.manifestKey);
    const out = await workerHandler({ Items: shards, BatchInput: { campaign: 'entry', execution: 'exec-env' } }, lambdaContext());
    // assess
    expect(process.env['SONDAGE_TEST_ENTRY_KEY']).toBe('sk-test-entry-0123456789');
    expect(out).toMatchObject({ pending: 0, again: false });
    expect(out.done).toBeGreaterThan(0);
    expect(await h.ledger.counts('entry', 'generate')).toEqual({ pending: 0, done: out.done, failed: 0 });
  });
});
