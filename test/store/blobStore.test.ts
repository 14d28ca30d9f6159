import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SondageError } from '../../lib/errors.js';
import { LocalBlobStore } from '../../lib/store/index.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'sondage-blob-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('LocalBlobStore', () => {
  it('puts, gets, checks and deletes keys', async () => {
    const store = new LocalBlobStore(path.join(root, 'a'));

    await store.put('campaigns/demo/plan.json', '{"x":1}');
    await store.put('campaigns/demo/bytes.bin', new Uint8Array([0, 1, 255]));

    expect(new TextDecoder().decode(await store.get('campaigns/demo/plan.json'))).toBe('{"x":1}');
    expect(Array.from((await store.get('campaigns/demo/bytes.bin')) ?? [])).toEqual([0, 1, 255]);
    expect(await store.exists('campaigns/demo/plan.json')).toBe(true);
    expect(await store.exists('campaigns/demo')).toBe(false); // a folder is not a key
    expect(await store.get('campaigns/demo/none.json')).toBeUndefined();
    expect(await store.exists('campaigns/nothing/here.json')).toBe(false);

    await store.delete('campaigns/demo/plan.json');
    await store.delete('campaigns/demo/plan.json'); // deleting a missing key is fine
    expect(await store.exists('campaigns/demo/plan.json')).toBe(false);
  });

  it('replaces a key atomically and leaves no temporary file behind', async () => {
    const store = new LocalBlobStore(path.join(root, 'b'));
    await store.put('k/v.txt', 'one');
    await store.put('k/v.txt', 'two');
    expect(new TextDecoder().decode(await store.get('k/v.txt'))).toBe('two');
    expect(readdirSync(path.join(root, 'b', 'k'))).toEqual(['v.txt']);
  });

  it('lists recursively by plain prefix, sorted, skipping writes in progress', async () => {
    const store = new LocalBlobStore(path.join(root, 'c'));
    const keys = [
      'campaigns/demo/generate/replies/model=b/language=en/part-2.parquet',
      'campaigns/demo/generate/replies/model=a/language=zh/part-1.parquet',
      'campaigns/demo/generate/replies/model=a/language=de/part-1.parquet',
      'campaigns/demo/generate/prompts/model=a/language=de/part-1.parquet',
      'campaigns/demo-2/plan.json',
      'campaigns/demo/plan.json',
    ];
    for (const k of keys) await store.put(k, 'x');
    writeFileSync(store.localPath('campaigns/demo/generate/replies/model=a/language=de/.part-9.parquet.1-ab.tmp'), 'half');

    expect(await store.list('campaigns/demo/generate/replies/')).toEqual([
      'campaigns/demo/generate/replies/model=a/language=de/part-1.parquet',
      'campaigns/demo/generate/replies/model=a/language=zh/part-1.parquet',
      'campaigns/demo/generate/replies/model=b/language=en/part-2.parquet',
    ]);
    expect(await store.list('campaigns/demo/generate/replies/model=a')).toHaveLength(2);
    // A prefix that is not a folder boundary matches like an S3 prefix.
    expect(await store.list('campaigns/demo')).toEqual([...keys].sort());
    expect(await store.list('campaigns/demo/')).toHaveLength(5);
    expect(await store.list('')).toEqual([...keys].sort());
    expect(await store.list('campaigns/absent/')).toEqual([]);
  });

  it('rejects keys that are not clean relative paths', async () => {
    const store = new LocalBlobStore(path.join(root, 'd'));
    for (const bad of ['../escape.txt', 'a/../../b', '/abs/key', 'a//b', 'a/./b', '', 'a\\b']) {
      await expect(store.put(bad, 'x'), bad).rejects.toThrow(SondageError);
      expect(() => store.localPath(bad), bad).toThrow(/not a relative path/);
    }
  });

  it('gives the local path of a key under its root', () => {
    const store = new LocalBlobStore(path.join(root, 'e'));
    expect(store.localPath('campaigns/x/plan.json')).toBe(path.join(root, 'e', 'campaigns', 'x', 'plan.json'));
  });
});
