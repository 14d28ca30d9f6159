import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoLedger, ITEM_SHARDS, itemShard } from '../../lib/store/DynamoLedger.js';
import { EmbeddedLedger, PartCommittedError } from '../../lib/store/index.js';
import type { Ledger } from '../../lib/store/types.js';
import { useTempDir } from '../helpers/campaigns.js';
import { useDynamoLedgers } from '../helpers/localDynamoLedger.js';

const tmp = useTempDir('ledgers', 'all');
const local = useDynamoLedgers();

let n = 0;
const dynamo = (runId?: string): DynamoLedger => local.open(runId || undefined);
const backends: [string, (runId?: string) => Ledger][] = [
  ['embedded', (runId) => new EmbeddedLedger(tmp.dir, runId ? { runId } : {})],
  ['dynamodb', dynamo],
];

// The same scenarios on both ledgers (STYLE.md "Tests in general": one scenario, two entry points).
describe.each(backends)('%s ledger', (_name, open) => {
  const campaign = (): string => `c${++n}`;

  it('reserves under the cap, refuses past it, settles actual cost and releases', async () => {
    const ledger = open();
    const c = campaign();
    await ledger.initCampaign(c, 1, 'run-1');
    expect(await ledger.reserve(c, 'a', 0.6)).toBe(true);
    expect(await ledger.reserve(c, 'b', 0.5)).toBe(false);
    expect(await ledger.reserve(c, 'b', 0.4)).toBe(true); // exactly the rest
    await ledger.settle(c, 'a', 0.25);
    expect(await ledger.budget(c)).toEqual({ cap_usd: 1, spent_usd: 0.25, reserved_usd: 0.4, orphaned_usd: 0, possibly_billed_usd: 0 });
    await ledger.release(c, 'b');
    await ledger.release(c, 'b'); // twice is harmless
    expect(await ledger.budget(c)).toEqual({ cap_usd: 1, spent_usd: 0.25, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
    await expect(ledger.reserve(c, 'a2', 0.75)).resolves.toBe(true);
    await expect(ledger.reserve(c, 'a2', 0)).rejects.toThrow(/already exists/);
    await ledger.close();
  });

  it('a part commit moves the reservations of unanswered attempts to possibly billed, counted against the cap', async () => {
    const ledger = open();
    const c = campaign();
    await ledger.initCampaign(c, 1, 'run-1');
    await ledger.registerItems(c, { phase: 'g', model: 'm', language: 'en' }, ['a', 'b']);
    expect(await ledger.reserve(c, 'chunk', 0.6)).toBe(true);
    // 'a' answered for $0.1; 'b' timed out after it was sent: its $0.3 may have been billed.
    await ledger.commitPart({ campaign: c, phase: 'g', model: 'm', language: 'en', partKey: 'p1', done: ['a'], failed: ['b'], reservationIds: ['chunk'], costUsd: 0.1, possiblyBilledUsd: 0.3 });
    expect(await ledger.budget(c)).toMatchObject({ spent_usd: 0.1, reserved_usd: 0, possibly_billed_usd: 0.3 });
    expect(await ledger.reserve(c, 'next', 0.61)).toBe(false);
    expect(await ledger.reserve(c, 'next', 0.6)).toBe(true);
    await ledger.close();
  });

  it('keeps spending across a re-init with a new cap, and names a campaign with no budget', async () => {
    const ledger = open();
    const c = campaign();
    await ledger.initCampaign(c, 1, 'run-1');
    expect(await ledger.reserve(c, 'a', 0.9)).toBe(true);
    await ledger.settle(c, 'a', 0.9);
    await ledger.initCampaign(c, 2, 'run-2');
    expect(await ledger.budget(c)).toEqual({ cap_usd: 2, spent_usd: 0.9, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
    expect(await ledger.reserve(c, 'b', 1.1)).toBe(true);
    expect(await ledger.reserve(c, 'c', 0.01)).toBe(false);
    await expect(ledger.budget('nobody')).rejects.toThrow(/"nobody" has no budget.*initCampaign/);
    await expect(ledger.reserve('nobody', 'x', 1)).rejects.toThrow(/has no budget/);
    await ledger.close();
  });

  it('never releases the reservations a killed run left: held, or billed, as the ledger scenario says', async () => {
    const c = campaign();
    const killed = open('run-old');
    await killed.initCampaign(c, 10, 'run-old');
    expect(await killed.reserve(c, 'old-1', 1)).toBe(true);
    expect(await killed.reserve(c, 'old-2', 2)).toBe(true);
    const next = open('run-new');
    await next.initCampaign(c, 10, 'run-new');
    expect(await next.reserve(c, 'new-1', 3)).toBe(true);
    expect(await next.orphanStale(c, 'run-new', 'bill')).toEqual({ count: 2, amountUsd: 3 });
    expect(await next.budget(c)).toEqual({ cap_usd: 10, spent_usd: 0, reserved_usd: 3, orphaned_usd: 0, possibly_billed_usd: 3 });
    // 3 reserved + 3 possibly billed: 4 more fit the cap of 10, 5 do not.
    expect(await next.reserve(c, 'new-2', 5)).toBe(false);
    expect(await next.reserve(c, 'new-2', 4)).toBe(true);
    await killed.close();
    await next.close();
  });

  it('registers items once, commits parts once and counts their cost once', async () => {
    const ledger = open();
    const c = campaign();
    await ledger.initCampaign(c, 10, 'run-1');
    await ledger.registerItems(c, { phase: 'generate', model: 'm', language: 'en' }, ['i3', 'i1', 'i2']);
    await ledger.registerItems(c, { phase: 'generate', model: 'm', language: 'en' }, ['i4', 'i1']);
    expect([...(await ledger.pendingItems(c, 'generate'))]).toEqual(['i3', 'i1', 'i2', 'i4']);
    expect(await ledger.reserve(c, 'r1', 1)).toBe(true);
    expect(await ledger.reserve(c, 'r2', 1)).toBe(true);
    const commit = { campaign: c, phase: 'generate', model: 'm', language: 'en', partKey: 'p/part-0001.parquet', done: ['i1', 'i3'], failed: ['i2'], reservationIds: ['r1', 'r2'], costUsd: 0.5 };
    await ledger.commitPart(commit);
    await expect(ledger.commitPart(commit)).rejects.toBeInstanceOf(PartCommittedError);
    expect(await ledger.budget(c)).toEqual({ cap_usd: 10, spent_usd: 0.5, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
    expect(await ledger.counts(c, 'generate')).toEqual({ pending: 1, done: 2, failed: 1 });
    expect([...(await ledger.pendingItems(c, 'generate'))]).toEqual(['i2', 'i4']);
    expect([...(await ledger.pendingAmong(c, { phase: 'generate', model: 'm', language: 'en' }, ['i4', 'i3', 'new', 'i2']))]).toEqual(['i4', 'new', 'i2']);
    expect([...(await ledger.committedParts(c, 'generate'))]).toEqual(['p/part-0001.parquet']);
    // A later part cannot take a done item away from its part, but can finish a failed one.
    await ledger.commitPart({ campaign: c, phase: 'generate', model: 'm', language: 'en', partKey: 'p/part-0002.parquet', done: ['i1', 'i2', 'i4'], failed: [], costUsd: 0.25 });
    expect(await ledger.counts(c, 'generate')).toEqual({ pending: 0, done: 4, failed: 0 });
    expect((await ledger.budget(c)).spent_usd).toBeCloseTo(0.75, 12);
    await ledger.close();
  });

  it('does not hand out a permanently failed item again unless retryFailed; the last attempt decides', async () => {
    const ledger = open();
    const c = campaign();
    const g = 'generate';
    await ledger.initCampaign(c, 10, 'run-1');
    await ledger.registerItems(c, { phase: g, model: 'm', language: 'en' }, ['a', 'b', 'c', 'd']);
    await ledger.commitPart({ campaign: c, phase: g, model: 'm', language: 'en', partKey: 'p1', done: ['a'], failed: ['b'], failedPermanently: ['c'], costUsd: 0.1 });
    expect(await ledger.counts(c, g)).toEqual({ pending: 1, done: 1, failed: 2 });
    expect([...(await ledger.pendingAmong(c, { phase: g, model: 'm', language: 'en' }, ['d', 'c', 'b', 'a', 'new']))]).toEqual(['d', 'b', 'new']);
    expect([...(await ledger.pendingAmong(c, { phase: g, model: 'm', language: 'en' }, ['d', 'c', 'b', 'a'], { retryFailed: true }))]).toEqual(['d', 'c', 'b']);
    // `status` lists the errors of every item not done, permanent ones included.
    expect([...(await ledger.pendingItems(c, g))]).toEqual(['b', 'c', 'd']);

    // Asked again with retryFailed: a transient failure now makes it re-askable, a permanent one
    // (b) makes b skipped, a success (d) finishes it.
    await ledger.commitPart({ campaign: c, phase: g, model: 'm', language: 'en', partKey: 'p2', done: ['d'], failed: ['c'], failedPermanently: ['b', 'a'], costUsd: 0.1 });
    expect(await ledger.counts(c, g)).toEqual({ pending: 0, done: 2, failed: 2 });
    expect([...(await ledger.pendingAmong(c, { phase: g, model: 'm', language: 'en' }, ['a', 'b', 'c', 'd']))]).toEqual(['c']);
    await ledger.commitPart({ campaign: c, phase: g, model: 'm', language: 'en', partKey: 'p3', done: ['b'], failed: [], failedPermanently: ['c'], costUsd: 0 });
    expect([...(await ledger.pendingAmong(c, { phase: g, model: 'm', language: 'en' }, ['a', 'b', 'c', 'd']))]).toEqual([]);
    expect([...(await ledger.pendingAmong(c, { phase: g, model: 'm', language: 'en' }, ['a', 'b', 'c', 'd'], { retryFailed: true }))]).toEqual(['c']);
    expect(await ledger.counts(c, g)).toEqual({ pending: 0, done: 3, failed: 1 });
    expect((await ledger.budget(c)).spent_usd).toBeCloseTo(0.2, 12);
    await ledger.close();
  });

  it('counts several phases at once as it counts each: retired items, other campaigns and phases left out, a phase without items all zero', async () => {
    const ledger = open();
    const [c, other] = [campaign(), campaign()];
    await ledger.initCampaign(c, 10, 'run-1');
    await ledger.initCampaign(other, 10, 'run-1');
    const en = { phase: 'generate', model: 'm', language: 'en' };
    await ledger.registerPartition(c, en, ['a', 'b', 'c', 'd']);
    await ledger.registerPartition(c, { ...en, language: 'fr' }, ['e', 'f']);
    await ledger.registerPartition(c, { ...en, phase: 'judge' }, ['a', 'b', 'c']);
    await ledger.registerPartition(c, { ...en, phase: 'audit' }, ['z']);
    await ledger.registerPartition(other, en, ['a', 'b']);
    await ledger.commitPart({ campaign: c, ...en, partKey: 'p1', done: ['a', 'b'], failed: ['c'], costUsd: 0 });
    await ledger.commitPart({ campaign: c, ...en, phase: 'judge', partKey: 'p2', done: ['a'], failed: [], failedPermanently: ['b'], costUsd: 0 });
    await ledger.commitPart({ campaign: other, ...en, partKey: 'p3', done: ['a', 'b'], failed: [], costUsd: 0 });
    // The design dropped b (done) and d (pending) from generate/m/en.
    await ledger.registerPartition(c, en, ['a', 'c']);

    const phases = ['judge', 'generate', 'never-registered'];
    const together = await ledger.phaseCounts(c, phases);
    expect([...together.keys()]).toEqual(phases);
    for (const phase of phases) expect(together.get(phase), phase).toEqual(await ledger.counts(c, phase));
    expect(Object.fromEntries(together)).toEqual({
      judge: { pending: 1, done: 1, failed: 1 },
      generate: { pending: 2, done: 1, failed: 1 },
      'never-registered': { pending: 0, done: 0, failed: 0 },
    });
    await ledger.close();
  });
});

describe('DynamoLedger under DynamoDB semantics', () => {
  it(`spreads a phase's items over ${ITEM_SHARDS} partition keys by a hash of the item id, and reads them all back`, async () => {
    const ledger = dynamo();
    const c = `shards-${++n}`;
    const ids = Array.from({ length: 800 }, (_, i) => `item-${i}`);
    await ledger.initCampaign(c, 1, 'run-1');
    await ledger.registerItems(c, { phase: 'generate', model: 'm', language: 'en' }, ids);
    await ledger.commitPart({ campaign: c, phase: 'generate', model: 'm', language: 'en', partKey: 'p1', done: ids.slice(0, 300), failed: ids.slice(300, 310), costUsd: 0 });
    // assess: the rows' keys
    const rows = local.server.items('ledger').filter((r) => (r.pk as { S: string }).S.startsWith(`ITEM#${c}#`));
    expect(rows).toHaveLength(800);
    const keys = new Set(rows.map((r) => (r.pk as { S: string }).S));
    expect([...keys].sort()).toEqual(Array.from({ length: ITEM_SHARDS }, (_, s) => `ITEM#${c}#generate#${String(s).padStart(2, '0')}`));
    for (const r of rows) expect((r.pk as { S: string }).S).toBe(`ITEM#${c}#generate#${String(itemShard((r.sk as { S: string }).S)).padStart(2, '0')}`);
    // no shard holds much more than its share (800 / 16 = 50)
    const per = [...keys].map((k) => rows.filter((r) => (r.pk as { S: string }).S === k).length);
    expect(Math.max(...per)).toBeLessThan(100);
    // assess: every read fans out over the shards
    expect(await ledger.counts(c, 'generate')).toEqual({ pending: 490, done: 300, failed: 10 });
    expect([...(await ledger.pendingItems(c, 'generate'))]).toEqual(ids.filter((_, i) => i >= 300));
    expect((await ledger.pendingAmong(c, { phase: 'generate', model: 'm', language: 'en' }, ids)).size).toBe(500);
    await ledger.close();
  });

  it('refuses a ledger that keeps a phase\'s items under the one key of older versions, naming what to do, and writes nothing', async () => {
    // prepare: one item row as sondage wrote it before the shards
    const c = `legacy-${++n}`;
    const client = new DynamoDBClient({ endpoint: local.server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
    await client.send(new PutItemCommand({ TableName: 'ledger', Item: { pk: { S: `ITEM#${c}#generate` }, sk: { S: 'item-1' }, state: { S: 'done' } } }));
    client.destroy();
    const ledger = dynamo();
    const refused = new RegExp(`holds its items under the one key ITEM#${c}#generate.*asked and paid for again.*sondage purge <campaign> --aws`);
    // act + assess: every path that reads or writes the phase's items
    await expect(ledger.pendingAmong(c, { phase: 'generate', model: 'm', language: 'en' }, ['item-1', 'item-2'])).rejects.toThrow(refused);
    await expect(ledger.registerItems(c, { phase: 'generate', model: 'm', language: 'en' }, ['item-2'])).rejects.toThrow(refused);
    await expect(ledger.counts(c, 'generate')).rejects.toThrow(refused);
    await expect(ledger.pendingItems(c, 'generate')).rejects.toThrow(refused);
    await expect(ledger.registerPartition(c, { phase: 'generate', model: 'm', language: 'en' }, ['item-2'])).rejects.toThrow(refused);
    expect(local.server.items('ledger').filter((r) => (r.pk as { S: string }).S.startsWith(`ITEM#${c}#generate#`))).toEqual([]);
    // another phase of the campaign, in the new layout, is served
    await ledger.registerItems(c, { phase: 'judge', model: 'm', language: 'en' }, ['j-1']);
    expect(await ledger.counts(c, 'judge')).toEqual({ pending: 1, done: 0, failed: 0 });
    await ledger.close();
  });

  it('reads pendingAmong with 16 BatchGetItem requests in flight, asks again for unprocessed keys, and answers as the embedded ledger does', async () => {
    // prepare: 2,450 registered items, some done, some failed (for good or not), asked about in a
    // shuffled order with duplicates and unknown ids; the embedded ledger gets the same history.
    const c = `pending-${++n}`;
    const g = 'generate';
    const inflight = { now: 0, max: 0, gets: 0 };
    const client = new DynamoDBClient({ endpoint: local.server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchGetItemCommand') return next(args);
        inflight.gets++;
        inflight.max = Math.max(inflight.max, ++inflight.now);
        try {
          return await next(args);
        } finally {
          inflight.now--;
        }
      },
      { step: 'initialize', name: 'countInflightGets' },
    );
    const ledger = new DynamoLedger({ ledgerTable: 'ledger', budgetTable: 'budget', client });
    const reference = new EmbeddedLedger(tmp.dir);
    const ids = Array.from({ length: 2450 }, (_, i) => `item-${String(i).padStart(4, '0')}`);
    let seed = 11;
    const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const commit = { campaign: c, phase: g, model: 'm', language: 'en', partKey: 'p1', done: ids.filter((_, i) => i % 5 === 0), failed: ids.filter((_, i) => i % 17 === 1), failedPermanently: ids.filter((_, i) => i % 13 === 2), costUsd: 0 };
    for (const l of [ledger, reference]) {
      await l.initCampaign(c, 10, 'run-1');
      await l.registerItems(c, { phase: g, model: 'm', language: 'en' }, ids);
      await l.commitPart(commit);
    }
    const asked = [...ids, ...ids.filter(() => rand() < 0.1), 'unknown-1', 'unknown-2'].sort(() => rand() - 0.5);
    // act
    const expected = [await reference.pendingAmong(c, { phase: g, model: 'm', language: 'en' }, asked), await reference.pendingAmong(c, { phase: g, model: 'm', language: 'en' }, asked, { retryFailed: true })];
    // (registration read with its own bound: counted from here)
    Object.assign(inflight, { gets: 0, max: 0 });
    const plain = await ledger.pendingAmong(c, { phase: g, model: 'm', language: 'en' }, asked);
    const firstGets = inflight.gets;
    local.server.unprocessedReads = 250;
    const retried = await ledger.pendingAmong(c, { phase: g, model: 'm', language: 'en' }, asked, { retryFailed: true });
    // assess: the same ids in the same order; 25 requests of 100 distinct keys, 16 at a time
    expect([...plain]).toEqual([...expected[0]!]);
    expect([...retried]).toEqual([...expected[1]!]);
    expect(plain.size).toBeGreaterThan(1000);
    expect(retried.size).toBeGreaterThan(plain.size);
    expect(firstGets).toBe(25);
    expect(inflight.max).toBe(16);
    expect(local.server.unprocessedReads).toBe(0);
    expect(inflight.gets - firstGets).toBeGreaterThan(25);
    await ledger.close();
    await reference.close();
  });

  it('never overspends with concurrent reservers against one cap', async () => {
    // prepare: 8 workers, each its own client, 25 calls of random maximum cost against a $3 cap
    const c = `race-${++n}`;
    const admin = dynamo('run-race');
    await admin.initCampaign(c, 3, 'run-race');
    let seed = 7;
    const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const granted: number[] = [];
    // act
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        const worker = dynamo('run-race');
        for (let i = 0; i < 25; i++) {
          const max = Math.round((0.05 + rand() * 0.2) * 1000) / 1000;
          if (await worker.reserve(c, `w${w}-${i}`, max)) {
            granted.push(max);
            // The call costs at most what was reserved; half the calls settle, half are released.
            if (i % 2 === 0) await worker.settle(c, `w${w}-${i}`, max * 0.8);
            else await worker.release(c, `w${w}-${i}`);
          }
        }
        await worker.close();
      }),
    );
    // assess: some reservations were refused, spend stayed under the cap, nothing is left reserved
    const budget = await admin.budget(c);
    expect(granted.length).toBeGreaterThan(10);
    expect(granted.length).toBeLessThan(200);
    expect(budget.spent_usd).toBeLessThanOrEqual(3 + 1e-9);
    expect(budget.spent_usd).toBeGreaterThan(2.4); // the cap was actually reached, not avoided
    expect(budget.reserved_usd).toBeCloseTo(0, 9);
    const row = local.server.items('budget').find((i) => JSON.stringify(i.pk) === JSON.stringify({ S: c }) && JSON.stringify(i.sk) === '{"S":"BUDGET"}');
    expect(Number((row?.headroom_usd as { N: string }).N)).toBeCloseTo(3 - budget.spent_usd, 9);
    expect(local.server.calls.get('TransactWriteItems')).toBeGreaterThan(200);
    await admin.close();
  });

  it('never lets concurrent reservations pass the cap while they are held', async () => {
    const c = `hold-${++n}`;
    const admin = dynamo('run-hold');
    await admin.initCampaign(c, 1, 'run-hold');
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => dynamo('run-hold').reserve(c, `r${i}`, 0.1)));
    expect(results.filter(Boolean)).toHaveLength(10);
    expect(await admin.budget(c)).toEqual({ cap_usd: 1, spent_usd: 0, reserved_usd: expect.closeTo(1, 9) as unknown, orphaned_usd: 0, possibly_billed_usd: 0 });
    await admin.close();
  });

  it('folds a part holding more reservations than one transaction allows', async () => {
    const c = `many-${++n}`;
    const ledger = dynamo('run-many');
    await ledger.initCampaign(c, 100, 'run-many');
    const ids = Array.from({ length: 130 }, (_, i) => `r${i}`);
    for (const id of ids) expect(await ledger.reserve(c, id, 0.5)).toBe(true);
    await ledger.registerItems(c, { phase: 'generate', model: 'm', language: 'en' }, ['a']);
    await ledger.commitPart({ campaign: c, phase: 'generate', model: 'm', language: 'en', partKey: 'big', done: ['a'], failed: [], reservationIds: ids, costUsd: 40 });
    expect(await ledger.budget(c)).toEqual({ cap_usd: 100, spent_usd: 40, reserved_usd: expect.closeTo(0, 9) as unknown, orphaned_usd: 0, possibly_billed_usd: 0 });
    expect(await ledger.reserve(c, 'after', 60)).toBe(true);
    await ledger.close();
  });

  it('records provider batches, keeps their reservation through orphanStale, closes them with the part', async () => {
    const c = `batch-${++n}`;
    const ledger = dynamo('run-b1');
    await ledger.initCampaign(c, 10, 'run-b1');
    expect(await ledger.reserve(c, 'batch-res', 4)).toBe(true);
    expect(await ledger.reserve(c, 'plain-res', 1)).toBe(true);
    const record = { campaign: c, phase: 'generate', model: 'm', language: 'en', batchId: 'b-1', handleJson: '{"id":"b-1"}', reservationId: 'batch-res' };
    await ledger.recordBatch(record);
    await expect(ledger.recordBatch(record)).rejects.toThrow(/already recorded/);
    expect(await ledger.openBatches(c, 'generate', 'm', 'en')).toEqual([record]);
    const next = dynamo('run-b2');
    expect((await next.orphanStale(c, 'run-b2', 'bill')).count).toBe(1);
    expect((await next.budget(c)).reserved_usd).toBe(4);
    await next.commitPart({ campaign: c, phase: 'generate', model: 'm', language: 'en', partKey: 'pb', done: [], failed: [], reservationIds: ['batch-res'], costUsd: 3, closeBatches: ['b-1'] } as Parameters<Ledger['commitPart']>[0]);
    expect(await next.openBatches(c, 'generate', 'm', 'en')).toEqual([]);
    expect(await next.budget(c)).toEqual({ cap_usd: 10, spent_usd: 3, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 1 });
    const closed = local.server.items('ledger').find((i) => JSON.stringify(i.sk) === '{"S":"b-1"}');
    expect(closed?.expires_at).toBeDefined(); // closed batch records expire by TTL
    await ledger.close();
    await next.close();
  });
});

describe('the DynamoDB test server under injected throttling', () => {
  it.each(['ThrottlingException', 'ProvisionedThroughputExceededException'] as const)('answers %s for the next requests, applying none of them, then serves again', async (type) => {
    // prepare: a ledger whose client does not retry, so each refusal reaches it
    const ledger = dynamo('run-t');
    const c = `throttled-${type}`;
    await ledger.initCampaign(c, 1, 'run-t');
    local.server.injectFault({ times: 2, type, operations: ['TransactWriteItems'] });
    // act + assess: two refused reservations change nothing; the third is granted
    await expect(ledger.reserve(c, 'r1', 0.4)).rejects.toMatchObject({ name: type, $metadata: { httpStatusCode: 400 } });
    await expect(ledger.reserve(c, 'r1', 0.4)).rejects.toMatchObject({ name: type });
    expect(await ledger.budget(c)).toEqual({ cap_usd: 1, spent_usd: 0, reserved_usd: 0, orphaned_usd: 0, possibly_billed_usd: 0 });
    expect(await ledger.reserve(c, 'r1', 0.4)).toBe(true);
    expect((await ledger.budget(c)).reserved_usd).toBeCloseTo(0.4, 12);
    await ledger.close();
  });
});
