import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBlobStore } from '../../lib/store/index.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import type { BlobStore } from '../../lib/store/types.js';
import { startS3Server } from './s3Server.js';
import type { S3Server } from './s3Server.js';

let server: S3Server;
let dir: string;
beforeAll(async () => {
  server = await startS3Server();
  server.pageSize = 2; // ListObjectsV2 pages of two keys: list() must follow the continuation token
  dir = mkdtempSync(join(tmpdir(), 'sondage-blobs-'));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const s3 = (prefix?: string): S3BlobStore =>
  new S3BlobStore({
    bucket: 'data',
    ...(prefix ? { prefix } : {}),
    clientConfig: {
      endpoint: server.url,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 1,
    },
  });

let n = 0;
describe.each([
  ['local', (): BlobStore => new LocalBlobStore(join(dir, `local-${++n}`))],
  ['s3', (): BlobStore => s3(`tenant-${++n}`)],
] as const)('%s blob store', (_name, open) => {
  it('puts, gets, lists under a prefix in key order, and deletes', async () => {
    const store = open();
    const bytes = new Uint8Array([0, 1, 2, 255]);
    await store.put('campaigns/c/generate/replies/model=a/language=en/part-0002.parquet', bytes);
    await store.put('campaigns/c/generate/replies/model=a/language=en/part-0001.parquet', 'text ü');
    await store.put('campaigns/c/generate/replies/model=b/language=en/part-0001.parquet', 'b');
    await store.put('campaigns/d/plan.json', '{}');
    expect(await store.get('campaigns/c/generate/replies/model=a/language=en/part-0002.parquet')).toEqual(bytes);
    expect(new TextDecoder().decode(await store.get('campaigns/c/generate/replies/model=a/language=en/part-0001.parquet'))).toBe('text ü');
    expect(await store.get('campaigns/c/missing')).toBeUndefined();
    expect(await store.exists('campaigns/d/plan.json')).toBe(true);
    expect(await store.exists('campaigns/d/other.json')).toBe(false);
    expect(await store.list('campaigns/c/')).toEqual([
      'campaigns/c/generate/replies/model=a/language=en/part-0001.parquet',
      'campaigns/c/generate/replies/model=a/language=en/part-0002.parquet',
      'campaigns/c/generate/replies/model=b/language=en/part-0001.parquet',
    ]);
    await store.delete('campaigns/d/plan.json');
    await store.delete('campaigns/d/plan.json');
    expect(await store.exists('campaigns/d/plan.json')).toBe(false);
  });

  it('refuses keys that are not clean relative paths', async () => {
    await expect(open().put('../escape', 'x')).rejects.toThrow(/not a relative path/);
  });
});

it('S3BlobStore stores keys under its prefix in the bucket', async () => {
  const store = s3('/deploy-1/');
  await store.put('campaigns/x/a.txt', 'a');
  expect([...server.objects.keys()]).toContain('data/deploy-1/campaigns/x/a.txt');
  expect(await store.list('campaigns/x/')).toEqual(['campaigns/x/a.txt']);
});

it('the test server refuses requests with an injected 503 SlowDown, changing nothing, then serves again', async () => {
  // prepare: a store that does not retry, so each refusal reaches it
  const store = s3();
  await store.put('campaigns/f/kept.txt', 'before');
  server.injectFault({ times: 2, methods: ['PUT'], keyPrefix: 'campaigns/f/' });
  // act + assess: two refused writes leave the object as it was; the third is served
  await expect(store.put('campaigns/f/kept.txt', 'after')).rejects.toMatchObject({ name: 'SlowDown', $metadata: { httpStatusCode: 503 } });
  await expect(store.put('campaigns/f/kept.txt', 'after')).rejects.toMatchObject({ name: 'SlowDown' });
  expect(new TextDecoder().decode(await store.get('campaigns/f/kept.txt'))).toBe('before');
  await store.put('campaigns/f/kept.txt', 'after');
  expect(new TextDecoder().decode(await store.get('campaigns/f/kept.txt'))).toBe('after');
  expect(server.faultsServed).toBe(2);
});
