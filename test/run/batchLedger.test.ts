import { describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lib/store/index.js';
import type { BatchIntent, Ledger } from '../../lib/store/types.js';
import { useTempDir } from '../helpers/campaigns.js';
import { useDynamoLedgers } from '../helpers/localDynamoLedger.js';

const tmp = useTempDir('batch-ledgers', 'all');
const dynamo = useDynamoLedgers();

const backends: [string, (runId: string) => Ledger][] = [
  ['embedded', (runId) => new EmbeddedLedger(tmp.dir, { runId })],
  ['dynamodb', (runId) => dynamo.open(runId)],
];

let n = 0;
const intent = (campaign: string, key: string, reservationId: string, language = 'en'): BatchIntent => ({
  campaign,
  phase: 'generate',
  model: 'm',
  language,
  provider: 'openai/gpt-4.1-mini',
  submissionKey: key,
  customIds: [`${key}-a`, `${key}-b`],
  reservationId,
  createdAt: 1_700_000_000_000 + n,
});

// The submission intents and cancel marks, the same on both ledgers.
describe.each(backends)('%s ledger: batch intents', (_name, open) => {
  const campaign = (): string => `bi${++n}`;

  it('holds an intent and its reservation across a restart, and resolves it by recording its batch', async () => {
    const ledger = open('run-1');
    const c = campaign();
    await ledger.initCampaign(c, 10, 'run-1');
    expect(await ledger.reserve(c, 'r1', 1)).toBe(true);
    expect(await ledger.reserve(c, 'r2', 2)).toBe(true);
    await ledger.recordBatchIntent(intent(c, 'k1', 'r1'));
    await ledger.recordBatchIntent(intent(c, 'k2', 'r2', 'de'));
    await expect(ledger.recordBatchIntent(intent(c, 'k1', 'r1'))).rejects.toThrow();

    expect(await ledger.batchIntents(c, 'generate', 'm', 'en')).toEqual([intent(c, 'k1', 'r1')]);
    expect((await ledger.campaignBatchIntents(c)).map((i) => i.submissionKey).sort()).toEqual(['k1', 'k2']);
    // Another run's start keeps both reservations: either batch may exist at the provider.
    const other = open('run-2');
    expect((await other.orphanStale(c, 'run-2', 'hold')).count).toBe(0);
    expect((await other.budget(c)).reserved_usd).toBeCloseTo(3, 12);

    await other.recordBatch({ campaign: c, phase: 'generate', model: 'm', language: 'en', batchId: 'batch_1', handleJson: '{}', reservationId: 'r1', submissionKey: 'k1' });
    expect(await other.batchIntents(c, 'generate', 'm', 'en')).toEqual([]);
    expect(await other.openBatches(c, 'generate', 'm', 'en')).toEqual([
      { campaign: c, phase: 'generate', model: 'm', language: 'en', batchId: 'batch_1', handleJson: '{}', reservationId: 'r1', submissionKey: 'k1' },
    ]);
    await ledger.close();
    await other.close();
  });

  it('drops an intent whose batch was never created, releasing its reservation; twice is harmless', async () => {
    const ledger = open('run-1');
    const c = campaign();
    await ledger.initCampaign(c, 10, 'run-1');
    expect(await ledger.reserve(c, 'r1', 1.5)).toBe(true);
    await ledger.recordBatchIntent(intent(c, 'k1', 'r1'));
    await ledger.dropBatchIntent(c, 'k1');
    await ledger.dropBatchIntent(c, 'k1');
    expect(await ledger.campaignBatchIntents(c)).toEqual([]);
    expect(await ledger.budget(c)).toEqual({ cap_usd: 10, spent_usd: 0, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
    await ledger.close();
  });

  it('lists a campaign’s open batches across partitions and marks a cancel request once', async () => {
    const ledger = open('run-1');
    const c = campaign();
    await ledger.initCampaign(c, 10, 'run-1');
    const rec = (batchId: string, language: string) => ({ campaign: c, phase: 'generate', model: 'm', language, batchId, handleJson: '{}', reservationId: `r-${batchId}` });
    await ledger.recordBatch(rec('b1', 'en'));
    await ledger.recordBatch(rec('b2', 'de'));
    await ledger.markBatchCancelled(c, 'b2', '2026-11-30T08:00:00.000Z');
    await ledger.markBatchCancelled(c, 'b2', '2026-11-30T09:00:00.000Z');
    await ledger.markBatchCancelled(c, 'unknown', '2026-11-30T09:00:00.000Z');
    expect(await ledger.campaignBatches(c)).toEqual([rec('b1', 'en'), { ...rec('b2', 'de'), cancelledAt: '2026-11-30T08:00:00.000Z' }]);
    await ledger.commitPart({ campaign: c, phase: 'generate', model: 'm', language: 'en', partKey: 'p1', done: [], failed: [], costUsd: 0, closeBatches: ['b1'] });
    expect((await ledger.campaignBatches(c)).map((b) => b.batchId)).toEqual(['b2']);
    await ledger.close();
  });
});
