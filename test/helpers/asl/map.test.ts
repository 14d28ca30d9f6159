/**
 * The Map state on hand-written definitions: inline iterations (ItemsPath, ItemSelector with the
 * item's index and value, MaxConcurrency held), and the Distributed Map as the pipeline uses it
 * (ItemReader from S3, ItemBatcher's `{ Items, BatchInput }`, ResultWriter files, tolerated
 * failures counted in items, at the boundary and past it), and Parallel.
 */
import { describe, expect, it } from 'vitest';
import { FN, outputOf, run, single } from './testing.js';
import type { Json, S3Access } from './types.js';

/** S3 objects in memory, as ItemReader and ResultWriter see them. */
function memoryS3(objects: Record<string, string> = {}): S3Access & { objects: Map<string, string> } {
  const map = new Map(Object.entries(objects));
  return {
    objects: map,
    getObject: async (bucket, key) => (map.has(`${bucket}/${key}`) ? Buffer.from(map.get(`${bucket}/${key}`)!) : undefined),
    putObject: async (bucket, key, body) => void map.set(`${bucket}/${key}`, body),
  };
}

/** A function that records how many calls run at once. */
function concurrencyProbe(answer: (p: Json) => Json = (p) => p) {
  const state = { now: 0, max: 0, calls: [] as Json[] };
  const fn = async (p: Json) => {
    state.calls.push(p);
    state.max = Math.max(state.max, ++state.now);
    await new Promise((r) => setTimeout(r, 5));
    state.now--;
    return answer(p);
  };
  return { fn, state };
}

describe('inline Map', () => {
  it('runs the ItemProcessor per item of ItemsPath, with ItemSelector, at most MaxConcurrency at once, results in item order', async () => {
    const def = single({
      Type: 'Map',
      ItemsPath: '$.list',
      MaxConcurrency: 2,
      ItemSelector: { 'index.$': '$$.Map.Item.Index', 'value.$': '$$.Map.Item.Value', 'shared.$': '$.shared' },
      ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: 'T', States: { T: { Type: 'Task', Resource: FN, End: true } } },
      ResultPath: '$.results',
    });
    const probe = concurrencyProbe((p) => (p as { value: number }).value * 10);
    const out = await run(def, { list: [5, 6, 7, 8, 9], shared: 's' }, { [FN]: probe.fn });
    expect(out.result).toEqual({ status: 'SUCCEEDED', output: { list: [5, 6, 7, 8, 9], shared: 's', results: [50, 60, 70, 80, 90] } });
    expect(probe.state.calls).toContainEqual({ index: 2, value: 7, shared: 's' });
    expect(probe.state.max).toBe(2);
  });

  it('fails with the error of a failed iteration (an inline Map tolerates none)', async () => {
    const def = single({ Type: 'Map', ItemProcessor: { StartAt: 'T', States: { T: { Type: 'Task', Resource: FN, End: true } } } });
    const out = await run(def, [1, 2, 3], {
      [FN]: async (p) => {
        if (p === 2) throw Object.assign(new Error('two'), { name: 'NotTwo' });
        return p;
      },
    });
    expect(out.result).toMatchObject({ status: 'FAILED', error: 'NotTwo' });
  });
});

/** The pipeline's Map shape: a manifest in S3, batches of `per` shards with a BatchInput, results written to S3. */
function distributedMap(extra: Record<string, unknown> = {}, per = 2) {
  return {
    StartAt: 'M',
    States: {
      M: {
        Type: 'Map',
        ItemReader: { Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'JSON' }, Parameters: { Bucket: 'data', 'Key.$': '$.manifestKey' } },
        ItemBatcher: { MaxItemsPerBatch: per, BatchInput: { 'campaign.$': '$.campaign', 'execution.$': '$$.Execution.Name' } },
        MaxConcurrencyPath: '$.copies',
        ItemProcessor: {
          ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
          StartAt: 'T',
          States: { T: { Type: 'Task', Resource: FN, ResultPath: '$.result', Next: 'Done' }, Done: { Type: 'Succeed', OutputPath: '$.result' } },
        },
        ResultWriter: { Resource: 'arn:aws:states:::s3:putObject', Parameters: { Bucket: 'data', Prefix: 'scratch/map-results/' } },
        ResultPath: '$.map',
        End: true,
        ...extra,
      },
    },
  };
}

const SHARDS = Array.from({ length: 5 }, (_, i) => ({ shard: i }));

describe('Distributed Map', () => {
  it('reads the items from S3, batches them with the BatchInput, runs batches MaxConcurrency at a time and writes the results to S3', async () => {
    const s3 = memoryS3({ 'data/scratch/wave-0.json': JSON.stringify(SHARDS) });
    const probe = concurrencyProbe((p) => ({ n: (p as { Items: unknown[] }).Items.length }));
    const out = await run(distributedMap(), { campaign: 'c', manifestKey: 'scratch/wave-0.json', copies: 2 }, { [FN]: probe.fn }, { name: 'exec-1', integrations: { s3 } });
    // assess: what each child got: Items and BatchInput, as the worker's WorkerEvent
    expect(probe.state.calls).toEqual([
      { Items: [{ shard: 0 }, { shard: 1 }], BatchInput: { campaign: 'c', execution: 'exec-1' } },
      { Items: [{ shard: 2 }, { shard: 3 }], BatchInput: { campaign: 'c', execution: 'exec-1' } },
      { Items: [{ shard: 4 }], BatchInput: { campaign: 'c', execution: 'exec-1' } },
    ]);
    expect(probe.state.max).toBe(2);
    // assess: the Map's result points at the manifest; the files hold every child's output
    expect(out.result.status).toBe('SUCCEEDED');
    const result = outputOf<{ map: { MapRunArn: string; ResultWriterDetails: { Bucket: string; Key: string } } }>(out).map;
    expect(result.ResultWriterDetails.Bucket).toBe('data');
    expect(result.ResultWriterDetails.Key).toMatch(/^scratch\/map-results\/[0-9a-f-]{36}\/manifest\.json$/);
    const manifest = JSON.parse(s3.objects.get(`data/${result.ResultWriterDetails.Key}`)!) as { ResultFiles: { SUCCEEDED: { Key: string }[]; FAILED: unknown[] } };
    expect(manifest.ResultFiles.FAILED).toEqual([]);
    const succeeded = JSON.parse(s3.objects.get(`data/${manifest.ResultFiles.SUCCEEDED[0]!.Key}`)!) as { Output: string; Status: string }[];
    expect(succeeded.map((s) => [s.Status, JSON.parse(s.Output)])).toEqual([
      ['SUCCEEDED', { n: 2 }],
      ['SUCCEEDED', { n: 2 }],
      ['SUCCEEDED', { n: 1 }],
    ]);
    expect(out.history.filter((e) => e.type === 'MapRunEnded')).toEqual([expect.objectContaining({ items: 5, children: 3, failedItems: 0, status: 'SUCCEEDED' })]);
  });

  /** Children fail for the listed first shards of their batch. */
  const failFor = (bad: number[]) => async (p: Json) => {
    const items = (p as { Items: { shard: number }[] }).Items;
    if (items.some((i) => bad.includes(i.shard))) throw Object.assign(new Error(`shard ${items[0]!.shard}`), { name: 'ShardFailed' });
    return 'ok';
  };

  it.each([
    // 5 items in batches of 1; shard 0 failing is 1 item = 20 %.
    { name: 'nothing tolerated by default', tolerance: {}, bad: [0], status: 'FAILED' },
    { name: '20 % tolerated, 20 % failed', tolerance: { ToleratedFailurePercentage: 20 }, bad: [0], status: 'SUCCEEDED' },
    { name: '19.9 % tolerated, 20 % failed', tolerance: { ToleratedFailurePercentage: 19.9 }, bad: [0], status: 'FAILED' },
    { name: '1 item tolerated, 1 failed', tolerance: { ToleratedFailureCount: 1 }, bad: [0], status: 'SUCCEEDED' },
    { name: '1 item tolerated, 2 failed', tolerance: { ToleratedFailureCount: 1 }, bad: [0, 3], status: 'FAILED' },
    { name: '40 % tolerated by path, 40 % failed', tolerance: { ToleratedFailurePercentagePath: '$.tolerated' }, bad: [0, 3], status: 'SUCCEEDED' },
    { name: 'both given: 40 % failed is past 30 % though within 5 items', tolerance: { ToleratedFailureCount: 5, ToleratedFailurePercentage: 30 }, bad: [0, 1], status: 'FAILED' },
  ])('tolerates failed items: $name → $status', async ({ tolerance, bad, status }) => {
    const s3 = memoryS3({ 'data/m.json': JSON.stringify(SHARDS) });
    const out = await run(distributedMap(tolerance, 1), { campaign: 'c', manifestKey: 'm.json', copies: 1, tolerated: 40 }, { [FN]: failFor(bad) }, { integrations: { s3 } });
    expect(out.result.status).toBe(status);
    if (status === 'FAILED') expect(out.result).toMatchObject({ error: 'States.ExceedToleratedFailureThreshold' });
    const ended = out.history.find((e) => e.type === 'MapRunEnded');
    expect(ended).toMatchObject({ status, items: 5 });
  });

  it('counts a failed batch as all of its items, starts no child past the threshold, and writes FAILED_0.json for tolerated ones', async () => {
    // prepare: batches of 2; the first batch fails (2 of 5 items = 40 %)
    const s3 = memoryS3({ 'data/m.json': JSON.stringify(SHARDS) });
    const calls: Json[] = [];
    const fn = async (p: Json) => (calls.push(p), failFor([0])(p));
    // act: 30 % tolerated, one child at a time
    const over = await run(distributedMap({ ToleratedFailurePercentage: 30 }), { campaign: 'c', manifestKey: 'm.json', copies: 1 }, { [FN]: fn }, { integrations: { s3 } });
    // assess: failed at once, the other batches never started
    expect(over.result).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold' });
    expect(calls).toHaveLength(1);
    // act: 40 % tolerated
    const within = await run(distributedMap({ ToleratedFailurePercentage: 40 }), { campaign: 'c', manifestKey: 'm.json', copies: 1 }, { [FN]: failFor([0]) }, { integrations: { s3 } });
    expect(within.result.status).toBe('SUCCEEDED');
    const key = outputOf<{ map: { ResultWriterDetails: { Key: string } } }>(within).map.ResultWriterDetails.Key;
    const manifest = JSON.parse(s3.objects.get(`data/${key}`)!) as { ResultFiles: { FAILED: { Key: string }[] } };
    const failed = JSON.parse(s3.objects.get(`data/${manifest.ResultFiles.FAILED[0]!.Key}`)!) as { Error: string; Input: string }[];
    expect(failed.map((f) => [f.Error, JSON.parse(f.Input).Items])).toEqual([['ShardFailed', [{ shard: 0 }, { shard: 1 }]]]);
  });

  it('counts a child that ended in States.Runtime as one failed child, not the end of the parent execution', async () => {
    const s3 = memoryS3({ 'data/m.json': JSON.stringify(SHARDS) });
    const def = distributedMap({ ToleratedFailureCount: 1 }, 1);
    const processor = (def.States.M as unknown as { ItemProcessor: { States: Record<string, Record<string, unknown>> } }).ItemProcessor;
    // The child reads a path only the first shard lacks.
    processor.States['T']!['Parameters'] = { 'shard.$': '$.Items[0].shard', 'odd.$': '$.Items[0].odd' };
    const items = SHARDS.map((s, i) => (i === 0 ? s : { ...s, odd: i % 2 === 1 }));
    s3.objects.set('data/m.json', JSON.stringify(items));
    const out = await run(def, { campaign: 'c', manifestKey: 'm.json', copies: 1 }, { [FN]: async () => 'ok' }, { integrations: { s3 } });
    expect(out.result.status).toBe('SUCCEEDED');
    expect(out.history.find((e) => e.type === 'MapRunEnded')).toMatchObject({ failedItems: 1, status: 'SUCCEEDED' });
  });

  it('fails with States.ItemReaderFailed when the manifest is missing, which the Map can catch', async () => {
    const def = distributedMap({ Catch: [{ ErrorEquals: ['States.ItemReaderFailed'], ResultPath: '$.failure', Next: 'Caught' }], End: undefined, Next: 'Caught' });
    (def.States as Record<string, unknown>)['Caught'] = { Type: 'Pass', End: true };
    const out = await run(def as never, { campaign: 'c', manifestKey: 'nope.json', copies: 1 }, { [FN]: async () => 1 }, { integrations: { s3: memoryS3() } });
    expect(out.result).toMatchObject({ status: 'SUCCEEDED', output: { failure: { Error: 'States.ItemReaderFailed', Cause: expect.stringContaining('s3://data/nope.json') as unknown } } });
  });

  it('fails with States.ItemReaderFailed when S3 refuses the read, and States.ResultWriterFailed when it refuses a result file', async () => {
    const s3 = memoryS3({ 'data/m.json': JSON.stringify(SHARDS) });
    const refusing = { ...s3, getObject: async () => Promise.reject(Object.assign(new Error('Please reduce your request rate.'), { name: 'SlowDown' })) };
    const read = await run(distributedMap(), { campaign: 'c', manifestKey: 'm.json', copies: 1 }, { [FN]: async () => 1 }, { integrations: { s3: refusing } });
    expect(read.result).toMatchObject({ status: 'FAILED', error: 'States.ItemReaderFailed', cause: 's3://data/m.json: SlowDown: Please reduce your request rate.' });
    const full = { ...s3, putObject: async () => Promise.reject(Object.assign(new Error('Access Denied'), { name: 'AccessDenied' })) };
    const write = await run(distributedMap(), { campaign: 'c', manifestKey: 'm.json', copies: 1 }, { [FN]: async () => 1 }, { integrations: { s3: full } });
    expect(write.result).toMatchObject({ status: 'FAILED', error: 'States.ResultWriterFailed' });
  });

  it('gives the array of child outputs without a ResultWriter, and no child for an empty manifest', async () => {
    const s3 = memoryS3({ 'data/m.json': JSON.stringify(SHARDS), 'data/empty.json': '[]' });
    const noWriter = distributedMap({ ResultWriter: undefined });
    const out = await run(noWriter as never, { campaign: 'c', manifestKey: 'm.json', copies: 0 }, { [FN]: async (p) => (p as { Items: unknown[] }).Items.length }, { integrations: { s3 } });
    expect(out.result).toMatchObject({ status: 'SUCCEEDED', output: { map: [2, 2, 1] } });
    const calls: Json[] = [];
    const empty = await run(noWriter as never, { campaign: 'c', manifestKey: 'empty.json', copies: 1 }, { [FN]: async (p) => calls.push(p) }, { integrations: { s3 } });
    expect(empty.result).toMatchObject({ status: 'SUCCEEDED', output: { map: [] } });
    expect(calls).toEqual([]);
  });
});

describe('Parallel', () => {
  it('runs every branch on the same input, side by side, and gives the array of their outputs', async () => {
    const probe = concurrencyProbe((p) => p);
    const def = {
      StartAt: 'P',
      States: {
        P: {
          Type: 'Parallel',
          Parameters: { 'x.$': '$.x' },
          Branches: [
            { StartAt: 'A', States: { A: { Type: 'Task', Resource: FN, End: true } } },
            { StartAt: 'B', States: { B: { Type: 'Task', Resource: FN, ResultSelector: { 'b.$': '$.x' }, End: true } } },
          ],
          ResultPath: '$.both',
          End: true,
        },
      },
    };
    const out = await run(def, { x: 1, y: 2 }, { [FN]: probe.fn });
    expect(out.result).toEqual({ status: 'SUCCEEDED', output: { x: 1, y: 2, both: [{ x: 1 }, { b: 1 }] } });
    expect(probe.state.max).toBe(2);
  });
});
