/**
 * A part committed on DynamoDB whose writer died, or was throttled past its retries, between the
 * commit transaction and the last item mark: the next reader of the phase finds its items done
 * (or failed) as the commit said, never pending, so nothing it paid for is asked again.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { MARK_CHUNK_IDS } from '../../lib/store/dynamo/partMarks.js';
import { startDynamoServer } from './dynamoServer.js';
import type { DynamoServer } from './dynamoServer.js';

let server: DynamoServer;
beforeAll(async () => {
  server = await startDynamoServer();
});
afterAll(() => server.close());

const config = () => ({ endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
const ledger = (client?: DynamoDBClient): DynamoLedger => new DynamoLedger({ ledgerTable: 'ledger', budgetTable: 'budget', ...(client ? { client } : { clientConfig: config() }) });

/**
 * A client that dies `after` requests past the first successful TransactWriteItems (the commit):
 * every later request fails before it leaves, as a killed Lambda's would.
 */
function killedAfterCommit(after: number): DynamoDBClient {
  const client = new DynamoDBClient(config());
  let committed = false;
  let left = after;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (committed && left-- <= 0) throw new Error('killed (injected): this request never left the process');
      const out = await next(args);
      if (context.commandName === 'TransactWriteItemsCommand' && JSON.stringify(args.input).includes('"PART#')) committed = true;
      return out;
    },
    { step: 'initialize', name: 'killAfterCommit' },
  );
  return client;
}

const ids = (n: number, prefix: string): string[] => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(6, '0')}`);

describe('DynamoLedger: committed parts whose items were not all marked', () => {
  it.each([
    { what: 'killed right after the commit transaction', after: 0, done: 40 },
    // Just past one chunk of marks: the replay reads two. Each item is a request of its own (the
    // registration, the marks made, the replay's), so more items would prove nothing more and cost
    // thousands of requests.
    { what: `killed part-way through marking a part of ${MARK_CHUNK_IDS + 100} items (two chunks of marks)`, after: 600, done: MARK_CHUNK_IDS + 100 },
  ])('$what: the next reader finds them done or failed, none pending', async ({ after, done }) => {
    // prepare: a campaign with the part's items registered and one reservation
    const c = `marks-${after}`;
    const part = { phase: 'generate', model: 'm', language: 'en' };
    const setup = ledger();
    await setup.initCampaign(c, 10, 'run-1');
    const answered = ids(done, 'a');
    const failed = ['f1', 'f2'];
    const refused = ['p1'];
    await setup.registerItems(c, part, [...answered, ...failed, ...refused, 'untouched']);
    const dying = ledger(killedAfterCommit(after));
    expect(await dying.reserve(c, 'chunk-1', 1)).toBe(true);
    // act: the commit lands, its writer dies before its last mark
    await expect(dying.commitPart({ campaign: c, ...part, partKey: 'p-1', done: answered, failed, failedPermanently: refused, reservationIds: ['chunk-1'], costUsd: 0.5 })).rejects.toThrow(/killed/);
    // assess: another worker's ledger reads the phase as the commit left it
    const next = ledger();
    const all = [...answered, ...failed, ...refused, 'untouched'];
    expect([...(await next.pendingAmong(c, part, all))]).toEqual([...failed, 'untouched']);
    expect(await next.counts(c, 'generate')).toEqual({ pending: 1, done, failed: 3 });
    expect([...(await next.pendingItems(c, 'generate'))].sort()).toEqual([...failed, ...refused, 'untouched'].sort());
    expect(await next.budget(c)).toMatchObject({ spent_usd: 0.5, reserved_usd: 0 });
    // The repair is made once: the part is marked, its not-marked row gone.
    expect(server.items('ledger').filter((i) => JSON.stringify(i.pk).includes(`UNMARKED#${c}#`))).toEqual([]);
    expect(server.items('ledger').find((i) => JSON.stringify(i.pk) === JSON.stringify({ S: `PART#${c}#generate` }))?.marked).toEqual({ BOOL: true });
    for (const l of [setup, dying, next]) await l.close();
  });

  it('a throttle past the SDK\'s retries on the item marks: the commit stands and the next reader marks them', async () => {
    const c = 'marks-throttled';
    const part = { phase: 'generate', model: 'm', language: 'en' };
    const l = ledger();
    await l.initCampaign(c, 10, 'run-1');
    await l.registerItems(c, part, ['x', 'y']);
    server.injectFault({ times: 1, type: 'ProvisionedThroughputExceededException', operations: ['UpdateItem'] });
    await expect(l.commitPart({ campaign: c, ...part, partKey: 'p-1', done: ['x', 'y'], failed: [], costUsd: 0.1 })).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    expect([...(await l.pendingAmong(c, part, ['x', 'y']))]).toEqual([]);
    expect(await l.counts(c, 'generate')).toEqual({ pending: 0, done: 2, failed: 0 });
    await l.close();
  });
});
