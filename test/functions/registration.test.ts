/**
 * DynamoLedger.registerItems as the plan uses it at scale: bulk requests (BatchGetItem of 100,
 * BatchWriteItem of 25), throttled writes retried, known items left in their state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { startDynamoServer, type DynamoServer } from '../store/dynamoServer.js';

let server: DynamoServer;
let ledger: DynamoLedger;
beforeAll(async () => {
  server = await startDynamoServer();
  ledger = new DynamoLedger({
    ledgerTable: 'ledger',
    budgetTable: 'budget',
    clientConfig: { endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 },
  });
});
afterAll(async () => {
  await ledger.close();
  await server.close();
});

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);

describe('DynamoLedger.registerItems in bulk', () => {
  it('writes 25 items a request after reading 100 keys a request, and retries what DynamoDB leaves unprocessed', async () => {
    // prepare: the first 30 writes come back unprocessed, as from a throttled partition
    server.calls.clear();
    server.unprocessedWrites = 30;
    const all = ids('a', 1000);
    // act
    await ledger.registerItems('reg', { phase: 'generate', model: 'm', language: 'en' }, [...all, all[0]!]);
    // assess: every item pending once, in registration order; 40 writes of 25 plus the retries
    expect(await ledger.counts('reg', 'generate')).toEqual({ pending: 1000, done: 0, failed: 0 });
    expect([...(await ledger.pendingItems('reg', 'generate'))]).toEqual(all);
    expect(server.calls.get('BatchGetItem')).toBe(10);
    expect(server.calls.get('BatchWriteItem')).toBeGreaterThanOrEqual(41);
    expect(server.calls.get('BatchWriteItem')).toBeLessThanOrEqual(42);
    expect(server.calls.get('UpdateItem')).toBe(3); // the sequence counter, the phase's counting start, the partition's counters
  });

  it('leaves known items in their state and writes only the new ones', async () => {
    // prepare: two items, one of them done
    await ledger.registerItems('known', { phase: 'generate', model: 'm', language: 'en' }, ['x1', 'x2']);
    await ledger.initCampaign('known', 1, 'run');
    await ledger.commitPart({ campaign: 'known', phase: 'generate', model: 'm', language: 'en', partKey: 'p1', done: ['x1'], failed: [], costUsd: 0 });
    server.calls.clear();
    // act
    await ledger.registerItems('known', { phase: 'generate', model: 'm', language: 'en' }, ['x3', 'x1', 'x2']);
    // assess: x1 stays done; one write request for x3; order continues after x2
    expect(await ledger.counts('known', 'generate')).toEqual({ pending: 2, done: 1, failed: 0 });
    expect([...(await ledger.pendingItems('known', 'generate'))]).toEqual(['x2', 'x3']);
    expect(server.calls.get('BatchWriteItem')).toBe(1);
    // act: everything known: reads only
    server.calls.clear();
    await ledger.registerItems('known', { phase: 'generate', model: 'm', language: 'en' }, ['x1', 'x2', 'x3']);
    expect(Object.fromEntries(server.calls)).toEqual({ BatchGetItem: 1 });
  });

});
