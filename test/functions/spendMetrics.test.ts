import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createPlan } from '../../functions/plan/handler.js';
import { addSpendMetrics } from '../../functions/shared/spend.js';
import { createHandler as createWorker } from '../../functions/worker/handler.js';
import { SPEND_METRICS } from '../../lib/config/index.js';
import { SondageError } from '../../lib/errors.js';
import { narrowDesign } from '../helpers/campaigns.js';
import { SECRET_ARN, lambdaContext, startHarness, uploadCampaign, type Harness, readShards } from './harness.js';
import { collectingPowertools } from '../helpers/powertools.js';

interface Emf {
  readonly _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
  readonly [key: string]: unknown;
}

/** The EMF blobs among collected Powertools lines. */
const emf = (lines: readonly string[]): Emf[] => lines.filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as Emf);

function collecting(): { metrics: Metrics; logger: Logger; lines: string[] } {
  const { metrics, logger, logs } = collectingPowertools();
  return { metrics, logger, lines: logs };
}

describe('addSpendMetrics', () => {
  it('adds spent (possibly billed calls of killed runs included), cap and their ratio under the campaign dimension', async () => {
    const { metrics, logger, lines } = collecting();
    metrics.addDimension('campaign', 'demo');
    await addSpendMetrics(metrics, { budget: async () => ({ cap_usd: 8, spent_usd: 6, reserved_usd: 1, orphaned_usd: 0, possibly_billed_usd: 0.5 }) }, 'demo', logger);
    metrics.publishStoredMetrics();
    const [blob] = emf(lines);
    expect(blob!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'campaign']]);
    expect(blob).toMatchObject({ campaign: 'demo', service: 'test', [SPEND_METRICS.spent]: 6.5, [SPEND_METRICS.cap]: 8, [SPEND_METRICS.share]: 0.8125 });
  });

  it('leaves the ratio out for a cap of 0, and only logs when the budget cannot be read', async () => {
    const { metrics, logger, lines } = collecting();
    await addSpendMetrics(metrics, { budget: async () => ({ cap_usd: 0, spent_usd: 0, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 }) }, 'zero', logger);
    await expect(
      addSpendMetrics(metrics, { budget: async () => Promise.reject(new SondageError('campaign "gone" has no budget')) }, 'gone', logger),
    ).resolves.toBeUndefined();
    metrics.publishStoredMetrics();
    const [blob] = emf(lines);
    expect(blob).toMatchObject({ [SPEND_METRICS.cap]: 0 });
    expect(blob).not.toHaveProperty(SPEND_METRICS.share);
    expect(lines.some((l) => l.includes('spend metrics not published') && l.includes('"campaign":"gone"'))).toBe(true);
  });
});

describe('worker handler: spend metrics', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.secrets.secrets.set(SECRET_ARN, JSON.stringify({}));
  });
  afterAll(async () => h.close());

  it("publishes the campaign's spend and share of its cap from the budget table after each invocation", async () => {
    // prepare: a small campaign, planned
    await uploadCampaign(h.store, 'w-spend', (doc) => {
      narrowDesign(doc, { forms: ['plain'], constraints: ['yesno'], stories: 1 });
      doc.models = doc.models.slice(0, 1);
    });
    const out = await createPlan({ ...h.deps(), glueDatabase: 'db' })({ campaign: 'w-spend', execution: 'exec-1' }, lambdaContext());
    const shards = await readShards(h.store, out.wave.lambda.manifestKey);
    const deps = h.deps();
    // act
    await createWorker(deps)({ Items: shards.slice(0, 1), BatchInput: { campaign: 'w-spend', execution: 'exec-1' } }, lambdaContext());
    // assess: the numbers are the budget table's, after the invocation's commit
    const budget = await h.ledger.budget('w-spend');
    expect(budget.spent_usd).toBeGreaterThan(0);
    const blob = emf(deps.logs).find((b) => SPEND_METRICS.share in b);
    expect(blob).toBeDefined();
    expect(blob!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'campaign']]);
    expect(blob).toMatchObject({ campaign: 'w-spend', [SPEND_METRICS.spent]: budget.spent_usd, [SPEND_METRICS.cap]: budget.cap_usd });
    expect(blob![SPEND_METRICS.share]).toBeCloseTo(budget.spent_usd / budget.cap_usd, 12);
  });
});
