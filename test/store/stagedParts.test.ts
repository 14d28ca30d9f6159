/**
 * Parts staged outside the tables until their commit (lib/store/stagedParts.ts): the staged key is
 * outside every table location, a move is idempotent on both backends (a rename on disk,
 * CopyObject + DeleteObject on S3, against the S3 stand-in), and publishCommitted moves exactly
 * the parts whose commit the ledger holds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBlobStore } from '../../lib/store/index.js';
import { parsePartKey, partKey } from '../../lib/store/layout.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import { moveObject, parseStagedKey, publishCommitted, stagedKey, stagedPrefix, stagingPrefix } from '../../lib/store/stagedParts.js';
import type { BlobStore } from '../../lib/store/types.js';
import { startS3Server } from './s3Server.js';
import type { S3Server } from './s3Server.js';

let server: S3Server;
let dir: string;
beforeAll(async () => {
  server = await startS3Server();
  dir = mkdtempSync(join(tmpdir(), 'sondage-staged-'));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const s3 = (): S3BlobStore =>
  new S3BlobStore({
    bucket: 'data',
    clientConfig: { endpoint: server.url, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 },
  });

const repliesKey = partKey('demo', 'judge', 'replies', 'alpha', 'de', 'part-x-00001.parquet');
// A judge's readings go to the judged phase's folder; the judge's commit publishes them.
const readingsKey = partKey('demo', 'generate', 'readings', 'alpha', 'de', 'part-x-00001.parquet');

describe('staged keys', () => {
  it('lie under the committing phase\'s _staged folder, outside every table location, and read back to the part and its commit', () => {
    const staged = stagedKey('judge', readingsKey);
    expect(staged).toBe('campaigns/demo/judge/_staged/generate/readings/model=alpha/language=de/part-x-00001.parquet');
    expect(staged.startsWith(stagingPrefix('demo', 'judge'))).toBe(true);
    // Not a part key: Athena's and DuckDB's table locations are campaigns/<c>/<phase>/<table>/…
    expect(parsePartKey(staged)).toBeUndefined();
    expect(/^campaigns\/[^/]+\/[^/]+\/(prompts|replies|readings)\//.test(staged)).toBe(false);
    expect(parseStagedKey(staged)).toMatchObject({ commitPhase: 'judge', finalKey: readingsKey, commitKey: repliesKey });
    expect(stagedPrefix('demo', 'judge', 'campaigns/demo/judge/replies/model=alpha/language=de/')).toBe('campaigns/demo/judge/_staged/judge/replies/model=alpha/language=de/');
    expect(parseStagedKey(repliesKey)).toBeUndefined();
    expect(() => stagedKey('judge', 'campaigns/demo/plan.json')).toThrow(/not a part key/);
  });
});

let n = 0;
describe.each([
  ['local', (): BlobStore => new LocalBlobStore(join(dir, `local-${++n}`))],
  ['S3', (): BlobStore => s3()],
])('%s store', (_name, make) => {
  it('move: the object is at its new key only; moving it again answers false and changes nothing', async () => {
    const store = make();
    const from = stagedKey('judge', repliesKey);
    await store.put(from, 'bytes');
    expect(await moveObject(store, from, repliesKey)).toBe(true);
    expect(Buffer.from((await store.get(repliesKey))!).toString()).toBe('bytes');
    expect(await store.exists(from)).toBe(false);
    expect(await moveObject(store, from, repliesKey)).toBe(false);
    expect(Buffer.from((await store.get(repliesKey))!).toString()).toBe('bytes');
  });

  it('publishCommitted moves the committed part\'s replies and readings into the tables and leaves an uncommitted one staged', async () => {
    const store = make();
    const other = partKey('demo', 'judge', 'replies', 'alpha', 'de', 'part-y-00001.parquet');
    for (const key of [repliesKey, readingsKey, other]) await store.put(stagedKey('judge', key), key);
    const ledger = { committedParts: async (_c: string, phase: string) => new Set(phase === 'judge' ? [repliesKey] : []) };
    expect(await publishCommitted(store, ledger, 'demo', ['generate', 'judge'])).toBe(2);
    expect(await store.exists(repliesKey)).toBe(true);
    expect(await store.exists(readingsKey)).toBe(true);
    expect(await store.exists(other)).toBe(false);
    expect(await store.list(stagingPrefix('demo', 'judge'))).toEqual([stagedKey('judge', other)]);
    // Again: nothing left to move.
    expect(await publishCommitted(store, ledger, 'demo', ['generate', 'judge'])).toBe(0);
  });
});

it('S3: the move is one CopyObject inside the bucket and one DeleteObject, no download', async () => {
  const store = s3();
  const from = stagedKey('judge', repliesKey);
  await store.put(from, 'bytes');
  const before = server.requests.length;
  await store.move(from, repliesKey);
  expect(server.requests.slice(before)).toEqual([
    { method: 'PUT', key: repliesKey, copySource: `data/${from}` },
    { method: 'DELETE', key: from },
  ]);
});
