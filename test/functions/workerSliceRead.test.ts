/**
 * A dependent shard reads only its slice of the upstream (lib/run/upstreamSlice.ts): the worker
 * handler, given the exact ItemBatcher event, copies from S3 only the generate parts whose writer
 * shard meets its slice. The partition is padded to the 10 M shape (FAR-6 at 10 M prompts over 48
 * partitions: ~208,000 generate rows a partition, written by ~104 shards of 2,000): parts named as
 * the workers name them, for the shards past the real ones, hold bytes no Parquet reader takes, so
 * a worker that copied or read them would count them and fail on them.
 */
import { describe, expect, it } from 'vitest';
import { createHandler as createPlan } from '../../functions/plan/handler.js';
import { createHandler as createWorker } from '../../functions/worker/handler.js';
import type { Shard, WorkerEvent } from '../../lib/config/pipeline.js';
import { partRange } from '../../lib/run/upstreamSlice.js';
import { partitionPrefix } from '../../lib/store/layout.js';
import type { BlobStore } from '../../lib/store/types.js';
import { narrowDesign } from '../helpers/campaigns.js';
import { lambdaContext, uploadCampaign, useHarness, readShards } from './harness.js';

const h = useHarness();

const CAMPAIGN = 'w-slice';
/** The 10 M shape of one partition: generate rows and the shards of 2,000 that wrote them. */
const SHAPE = { rows: 208_000, shardItems: 2_000 };
/** Bytes of one padding part (a real part of 2,000 replies is ~1 MB; smaller keeps the stand-in light). */
const PAD_BYTES = 64 * 1024;

/** A store that counts the bytes each key's GetObject returned. */
function countingStore(store: BlobStore): { store: BlobStore; got: Map<string, number> } {
  const got = new Map<string, number>();
  const counted = new Proxy(store, {
    get: (t, prop) =>
      prop === 'get'
        ? async (key: string) => {
            const body = await t.get(key);
            if (body !== undefined) got.set(key, (got.get(key) ?? 0) + body.byteLength);
            return body;
          }
        : (Reflect.get(t, prop, t) as unknown),
  });
  return { store: counted, got };
}

describe('a dependent shard on the worker', () => {
  it('copies only the upstream parts that meet its slice, at the 10 M shape of a partition', async () => {
    // prepare: one partition, generate and judge cut into shards of 20 (rpm 6), every reply judged
    await uploadCampaign(h.store, CAMPAIGN, (doc) => {
      narrowDesign(doc, { forms: ['plain', 'negint'], constraints: ['yesno', 'label'], stories: 2 });
      doc.models = doc.models.slice(0, 1);
      doc.models[0]!['rpm'] = 6;
      doc.judge['rpm'] = 6;
      doc.judge['sample_rate'] = 1;
    });
    const plan = createPlan({ ...h.deps(), glueDatabase: 'db' });
    const read = async (key: string) => await readShards(h.store, key);
    const first = await plan({ campaign: CAMPAIGN, execution: 'exec-1' }, lambdaContext());
    const generate = await read(first.wave.lambda.manifestKey);
    const event = (items: readonly Shard[]): WorkerEvent => ({ Items: items, BatchInput: { campaign: CAMPAIGN, execution: 'exec-1' } });
    for (const shard of generate) await createWorker(h.deps())(event([shard]), lambdaContext());
    const next = await plan({ campaign: CAMPAIGN, execution: 'exec-1', phasesRun: first.phasesRun }, lambdaContext());
    const judge = await read(next.wave.lambda.manifestKey);
    expect(judge.length).toBeGreaterThan(2);
    const { model, language } = judge[0]!;
    const real = generate.at(-1)!.end;
    // prepare: the rest of a 10 M-shape partition, as the workers of its other shards name their parts
    const folder = partitionPrefix(CAMPAIGN, 'generate', 'replies', model, language);
    for (let start = real; start < SHAPE.rows; start += SHAPE.shardItems) {
      await h.store.put(`${folder}part-e0-pad-generate-${start}-${start + SHAPE.shardItems}-generate-00000.parquet`, new Uint8Array(PAD_BYTES).fill(7));
    }
    const listed = (await h.store.list(folder)).filter((k) => k.endsWith('.parquet'));
    expect(listed.length).toBeGreaterThan(100);

    // act: each judge shard in its own invocation, its GetObject bytes counted
    for (const shard of judge) {
      const { store, got } = countingStore(h.store);
      const out = await createWorker({ ...h.deps(), store })(event([shard]), lambdaContext());

      // assess: its items answered, and of the generate parts only those whose writer shard meets its slice
      expect(out).toMatchObject({ pending: 0, again: false });
      const read = [...got.keys()].filter((k) => k.startsWith(folder));
      expect(read.length).toBeGreaterThan(0);
      for (const key of read) {
        const range = partRange(key)!;
        expect(range.start < shard.end && shard.start < range.end).toBe(true);
      }
      const bytes = read.reduce((s, k) => s + got.get(k)!, 0);
      expect(bytes).toBeLessThan(PAD_BYTES);
    }
    const counts = await h.ledger.counts(CAMPAIGN, 'judge');
    expect(counts.pending).toBe(0);
    expect(counts.done).toBeGreaterThan(0);
  }, 120_000);
});
