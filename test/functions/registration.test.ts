/**
 * DynamoLedger.registerItems as the plan uses it at scale: bulk requests (BatchGetItem of 100,
 * BatchWriteItem of 25), throttled writes retried, known items left in their state.
 */
import { describe, expect, it } from 'vitest';
import { useLocalDynamoLedger } from '../helpers/localDynamoLedger.js';

const dynamo = useLocalDynamoLedger();

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);

describe('DynamoLedger.registerItems in bulk', () => {
  it('writes 25 items a request after reading 100 keys a request, and retries what DynamoDB leaves unprocessed', async () => {
    // prepare: the first 30 writes come back unprocessed, as from a throttled partition
    dynamo.server.calls.clear();
    dynamo.server.unprocessedWrites = 30;
    const all = ids('a', 1000);
    // act
    await dynamo.ledger.registerItems('reg', { phase: 'generate', model: 'm', language: 'en' }, [...all, all[0]!]);
    // assess: every item pending once, in registration order; 40 writes of 25 plus the retries
    expect(await dynamo.ledger.counts('reg', 'generate')).toEqual({ pending: 1000, done: 0, failed: 0 });
    expect([...(await dynamo.ledger.pendingItems('reg', 'generate'))]).toEqual(all);
    expect(dynamo.server.calls.get('BatchGetItem')).toBe(10);
    expect(dynamo.server.calls.get('BatchWriteItem')).toBeGreaterThanOrEqual(41);
    expect(dynamo.server.calls.get('BatchWriteItem')).toBeLessThanOrEqual(42);
    expect(dynamo.server.calls.get('UpdateItem')).toBe(3); // the sequence counter, the phase's counting start, the partition's counters
  });

  it('leaves known items in their state and writes only the new ones', async () => {
    // prepare: two items, one of them done
    await dynamo.ledger.registerItems('known', { phase: 'generate', model: 'm', language: 'en' }, ['x1', 'x2']);
    await dynamo.ledger.initCampaign('known', 1, 'run');
    await dynamo.ledger.commitPart({ campaign: 'known', phase: 'generate', model: 'm', language: 'en', partKey: 'p1', done: ['x1'], failed: [], costUsd: 0 });
    dynamo.server.calls.clear();
    // act
    await dynamo.ledger.registerItems('known', { phase: 'generate', model: 'm', language: 'en' }, ['x3', 'x1', 'x2']);
    // assess: x1 stays done; one write request for x3; order continues after x2
    expect(await dynamo.ledger.counts('known', 'generate')).toEqual({ pending: 2, done: 1, failed: 0 });
    expect([...(await dynamo.ledger.pendingItems('known', 'generate'))]).toEqual(['x2', 'x3']);
    expect(dynamo.server.calls.get('BatchWriteItem')).toBe(1);
    // act: everything known: reads only
    dynamo.server.calls.clear();
    await dynamo.ledger.registerItems('known', { phase: 'generate', model: 'm', language: 'en' }, ['x1', 'x2', 'x3']);
    expect(Object.fromEntries(dynamo.server.calls)).toEqual({ BatchGetItem: 1 });
  });

});
