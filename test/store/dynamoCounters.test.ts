/**
 * `sondage status --aws` reads per-partition counters, not item rows (lib/store/dynamo/counters.ts):
 * Ledger.counts on DynamoDB answers as the embedded ledger does through registration, commits,
 * a part committed twice, failed-then-done items and a partition whose design changed, while
 * reading no item row; at the 10 M shape (48 partitions of ~208,000 items) it reads 48 rows.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bumpCounters } from '../../lib/store/dynamo/counters.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { EmbeddedLedger } from '../../lib/store/EmbeddedLedger.js';
import { PartCommittedError } from '../../lib/store/errors.js';
import type { Ledger } from '../../lib/store/types.js';
import { tempDir } from '../helpers/campaigns.js';
import { startDynamoServer } from './dynamoServer.js';
import type { DynamoServer } from './dynamoServer.js';

let server: DynamoServer;
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  server = await startDynamoServer();
  ({ dir, cleanup } = await tempDir('dynamo-counters'));
});
afterAll(async () => {
  await server.close();
  await cleanup();
});

const config = () => ({ endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });

/** A client that records the partition keys its Query requests name. */
function queryRecordingClient(): { client: DynamoDBClient; queried: string[] } {
  const client = new DynamoDBClient(config());
  const queried: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'QueryCommand') {
        const input = args.input as { ExpressionAttributeValues?: Record<string, { S?: string }> };
        queried.push(input.ExpressionAttributeValues?.[':p']?.S ?? '?');
      }
      return next(args);
    },
    { step: 'build', name: 'recordQueries' },
  );
  return { client, queried };
}

const ids = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

describe('DynamoLedger counts from per-partition counters', () => {
  it('answers as the embedded ledger through registration, commits, repeats and a changed design, reading no item row', async () => {
    // prepare: the same history on both ledgers
    const c = 'counted';
    const { client, queried } = queryRecordingClient();
    const dynamo = new DynamoLedger({ ledgerTable: 'ledger', budgetTable: 'budget', client });
    const embedded = new EmbeddedLedger(dir);
    const en = { phase: 'generate', model: 'm', language: 'en' };
    const de = { phase: 'generate', model: 'm', language: 'de' };
    const history = async (l: Ledger): Promise<void> => {
      await l.initCampaign(c, 10, 'run-1');
      await l.registerPartition(c, en, ids('en', 60));
      await l.registerPartition(c, de, ids('de', 40));
      await l.commitPart({ campaign: c, ...en, partKey: 'p1', done: ids('en', 20), failed: ['en0030', 'en0031'], failedPermanently: ['en0031', 'en0032'], costUsd: 0 });
      // a part delivered twice, then items failed before and now done, and one done again
      await l.commitPart({ campaign: c, ...en, partKey: 'p1', done: ids('en', 20), failed: [], costUsd: 0 }).catch((err: unknown) => {
        if (!(err instanceof PartCommittedError)) throw err;
      });
      await l.commitPart({ campaign: c, ...en, partKey: 'p2', done: ['en0030', 'en0000'], failed: [], costUsd: 0 });
      await l.commitPart({ campaign: c, ...de, partKey: 'p3', done: ids('de', 10), failed: ['de0039'], costUsd: 0 });
      // the design drops ten en items (three of them done) and adds five
      await l.registerPartition(c, en, [...ids('en', 60).slice(3, 53), 'new1', 'new2', 'new3', 'new4', 'new5']);
    };
    await history(dynamo);
    await history(embedded);
    queried.length = 0;

    // act
    const got = await dynamo.counts(c, 'generate');

    // assess: the embedded ledger's numbers, from the counter rows and no item row
    expect(got).toEqual(await embedded.counts(c, 'generate'));
    // en: 21 done, 2 failed, 3 done items dropped, 55 kept; de: 10 done, 1 failed of 40
    expect(got).toEqual({ done: 28, failed: 3, pending: 55 + 40 - 28 - 3 });
    expect(queried.filter((pk) => pk.startsWith('ITEM#'))).toEqual([]);
    expect(queried).toContain(`COUNT#${c}#generate`);
    await dynamo.close();
    await embedded.close();
  });

  it('reads one row per partition at the 10 M shape, and counts a phase registered before counters from its rows', async () => {
    // prepare: 8 models × 6 languages of ~208,000 items, counted as their registrations and commits left them
    const c = 'ten-million';
    const { client, queried } = queryRecordingClient();
    const dynamo = new DynamoLedger({ ledgerTable: 'ledger', budgetTable: 'budget', client });
    const doc = DynamoDBDocumentClient.from(new DynamoDBClient(config()));
    await doc.send(new PutCommand({ TableName: 'ledger', Item: { pk: `SEQ#${c}#generate`, sk: 'SEQ', next_seq: 10_000_000, counted: true } }));
    for (let m = 0; m < 8; m++) {
      for (const language of ['en', 'de', 'fr', 'ja', 'sw', 'ar']) await bumpCounters(doc, 'ledger', c, 'generate', `model-${m}`, language, { registered: 208_334, done: 150_000, failed: 1_000 });
    }
    // and a phase whose items a sondage without counters registered: no `counted` on its counter
    await dynamo.registerItems(c, { phase: 'judge', model: 'model-0', language: 'en' }, ids('j', 5));
    await doc.send(new PutCommand({ TableName: 'ledger', Item: { pk: `SEQ#${c}#judge`, sk: 'SEQ', next_seq: 5 } }));
    queried.length = 0;

    // act
    const started = performance.now();
    const got = await dynamo.counts(c, 'generate');
    const ms = performance.now() - started;
    const legacy = await dynamo.counts(c, 'judge');

    // assess
    expect(got).toEqual({ done: 48 * 150_000, failed: 48 * 1_000, pending: 48 * (208_334 - 151_000) });
    expect(queried.filter((pk) => pk.includes('#generate'))).toEqual([`UNMARKED#${c}#generate`, `COUNT#${c}#generate`]);
    expect(ms).toBeLessThan(5_000);
    expect(legacy).toEqual({ pending: 5, done: 0, failed: 0 });
    expect(queried.some((pk) => pk.startsWith(`ITEM#${c}#judge#`))).toBe(true);
    doc.destroy();
    await dynamo.close();
  });
});
