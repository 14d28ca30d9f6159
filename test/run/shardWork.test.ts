/**
 * ShardWork, what a Lambda worker's shard has in flight: its ledger passes every reservation on
 * whole (with the partition and items it covers), and follows the reservations and the
 * unanswered attempts a failed shard must still settle.
 */
import { describe, expect, it } from 'vitest';
import { ShardWork } from '../../lib/run/ShardWork.js';
import type { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import type { Ledger } from '../../lib/store/types.js';
import { useDynamoLedgers } from '../helpers/localDynamoLedger.js';

const local = useDynamoLedgers();

/** A fresh shard of execution exec-1, over a campaign capped at $10, with its ledger and the DynamoDB one it passes on to. */
async function startShard(campaign: string): Promise<{ inner: DynamoLedger; work: ShardWork; ledger: Ledger }> {
  const inner = local.open('exec-1');
  await inner.initCampaign(campaign, 10, 'exec-1');
  const work = new ShardWork();
  work.reset(false);
  return { inner, work, ledger: work.ledger(inner) };
}

describe('ShardWork', () => {
  it('reserves through its ledger with the scope: the ledger (and status --aws) sees the calls in flight', async () => {
    // prepare
    const { inner, work, ledger } = await startShard('sw-scope');
    // act
    const ok = await ledger.reserve('sw-scope', 'r-1', 0.5, { phase: 'generate', model: 'm', language: 'en', itemIds: ['a', 'b', 'c'] });
    // assess: the ledger knows the three calls in flight, and the shard holds the reservation
    expect(ok).toBe(true);
    expect(await inner.inFlight('sw-scope')).toEqual(new Map([['generate', 3]]));
    expect(work.reservations).toEqual(['r-1']);
  });

  it('counts unanswered attempts until the part of their journal is committed', async () => {
    // prepare
    const { inner, work, ledger } = await startShard('sw-unanswered');
    await ledger.reserve('sw-unanswered', 'r-1', 0.5, { phase: 'generate', model: 'm', language: 'en', itemIds: ['a', 'b'] });
    // act: two attempts of one journal and one of another go unanswered; the first journal's part is committed
    work.noteUnanswered('/tmp/j/inv-generate-0-generate-00000.ndjson', 0.2);
    work.noteUnanswered('/tmp/j/inv-generate-0-generate-00000.ndjson', 0.1);
    work.noteUnanswered('/tmp/j/inv-generate-0-generate-00001.ndjson', 0.25);
    expect(work.unansweredUsd).toBeCloseTo(0.55, 12);
    await ledger.commitPart({
      campaign: 'sw-unanswered',
      phase: 'generate',
      model: 'm',
      language: 'en',
      partKey: 'campaigns/sw-unanswered/generate/replies/model=m/language=en/part-inv-generate-0-generate-00000.parquet',
      done: ['a'],
      failed: [],
      reservationIds: ['r-1'],
      costUsd: 0.05,
      possiblyBilledUsd: 0.3,
    });
    // assess: only the uncommitted journal's attempt is left to the salvage; the reservation is settled
    expect(work.unansweredUsd).toBeCloseTo(0.25, 12);
    expect(work.reservations).toEqual([]);
    expect(await inner.budget('sw-unanswered')).toMatchObject({ reserved_usd: 0 });
    // act: a new shard starts
    work.reset(false);
    expect(work.unansweredUsd).toBe(0);
  });
});
