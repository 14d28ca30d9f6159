/**
 * The two ledgers are cut the same way, so that one reads against the other: each is a facade
 * (lib/store/EmbeddedLedger.ts, lib/store/DynamoLedger.ts) over one file per concern, with the same
 * names under lib/store/embedded/ and lib/store/dynamo/. These checks keep that shape: the facades
 * keep their public methods, every concern of the embedded ledger has its DynamoDB twin, every
 * file says in a header what it holds, and no file of lib/store grows past 500 lines unless it says
 * why.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { EmbeddedLedger } from '../../lib/store/EmbeddedLedger.js';
import { REPO_ROOT } from '../helpers/campaigns.js';

const STORE = path.join(REPO_ROOT, 'lib', 'store');

/** The public methods both facades have (those each class had before it became a facade, and phaseCounts since): callers in lib/run, functions/ and lib/cli use them. */
const LEDGER_METHODS = [
  'batchIntents', 'budget', 'campaignBatchIntents', 'campaignBatches', 'close', 'commitPart', 'committedParts', 'counts', 'dropBatchIntent',
  'inFlight', 'initCampaign', 'markBatchCancelled', 'openBatches', 'orphanStale', 'overrunOf', 'partitions', 'pendingAmong', 'pendingItems', 'phaseCounts', 'recordBatch',
  'recordBatchIntent', 'registerItems', 'registerPartition', 'release', 'reserve', 'resolveOrphans', 'settle',
];
// The embedded ledger records an overrun from the run's summary; DynamoDB's workers flag it on the budget item (flagOverrun).
// The local run asks an unbegun partition in one pass (hasItems, recordPartition); DynamoDB's workers run shards.
const EMBEDDED_ONLY = ['hasItems', 'orphanedItemIds', 'recordOverrun', 'recordPartition'];
const DYNAMO_ONLY = ['countRows', 'endHeartbeat', 'failures', 'fence', 'fenceOf', 'fencedOutBy', 'flagOverrun', 'heartbeat', 'liveHolders', 'recordFailure'];

const methodsOf = (proto: object): string[] =>
  Object.getOwnPropertyNames(proto)
    .filter((n) => n !== 'constructor' && typeof (proto as Record<string, unknown>)[n] === 'function')
    .filter((n) => !['runIdFor'].includes(n))
    .sort();

const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));

describe('the ledgers: two facades over the same cut', () => {
  it('each facade keeps the public methods its class had', () => {
    expect(methodsOf(EmbeddedLedger.prototype)).toEqual([...LEDGER_METHODS, ...EMBEDDED_ONLY].sort());
    expect(methodsOf(DynamoLedger.prototype)).toEqual([...LEDGER_METHODS, ...DYNAMO_ONLY].sort());
  });

  it('every concern of the embedded ledger has a file of the same name in the DynamoDB ledger', () => {
    const concerns = (dir: string): string[] => readdirSync(path.join(STORE, dir)).filter((f) => f.endsWith('.ts'));
    const embedded = concerns('embedded').filter((f) => f !== 'schema.ts'); // the SQLite file itself: DynamoDB's tables are made by the CDK stack
    expect(embedded.sort()).toEqual(['batches.ts', 'budget.ts', 'items.ts', 'partitions.ts']);
    expect(concerns('dynamo')).toEqual(expect.arrayContaining(embedded));
  });

  it('every file of the two ledgers opens with a comment saying what it holds', () => {
    const files = [...tsFiles(path.join(STORE, 'embedded')), ...tsFiles(path.join(STORE, 'dynamo')), path.join(STORE, 'EmbeddedLedger.ts'), path.join(STORE, 'DynamoLedger.ts')];
    const bare = files.filter((f) => !readFileSync(f, 'utf8').startsWith('/**')).map((f) => path.relative(REPO_ROOT, f));
    expect(bare).toEqual([]);
  });

  it('no file of lib/store is over 500 lines unless its header says why ("over 500 lines: …")', () => {
    const long = tsFiles(STORE)
      .map((f) => ({ f: path.relative(REPO_ROOT, f), text: readFileSync(f, 'utf8') }))
      .filter(({ text }) => text.split('\n').length > 500 && !/over 500 lines: \S/i.test(text))
      .map(({ f }) => f);
    expect(long).toEqual([]);
  });
});
