/**
 * The design an AWS campaign runs, as one digest: the bytes of every file of its uploaded input
 * (`campaigns/<c>/input/`: campaign.yaml and the files it names, which `sondage start --aws`
 * uploads) and the reader of every phase (its name and reader version, lib/run/readings.ts
 * `readerOf`). The plan and the workers compute it from the same objects, so both agree on it
 * without passing it along.
 *
 * Why the uploaded files and not the items: a dependent phase's items (a P(True) judge's prompt,
 * which holds the reference answer; X-Value's step 2, built from step 1's readings) are known only
 * once its upstream is read, which the plan of a campaign whose design did not change must not pay
 * for. Any edit of the input changes the digest, a budget or a comment too: the cost of such an edit
 * is that each dependent partition is checked once more (lib/run/rereadStoredReadings.ts).
 */
import { createHash } from 'node:crypto';
import type { PhaseGraph } from '../battery/phaseGraph.js';
import type { BlobStore } from '../store/types.js';
import { inputPrefix } from './campaignInput.js';
import { readerOf } from './readings.js';

/** One digest per run context (a worker's contexts are cached per execution: campaignCache). */
const digests = new WeakMap<object, Promise<string>>();

/**
 * The digest of the campaign's uploaded design (short hex), computed once per `ctx`.
 * @example const design = await designDigest(store, ctx); // 'a3f1…' (24 hex digits)
 */
export function designDigest(store: BlobStore, ctx: { readonly campaign: { readonly name: string }; readonly graph: PhaseGraph }): Promise<string> {
  let digest = digests.get(ctx);
  if (digest === undefined) {
    digest = computeDigest(store, ctx.campaign.name, ctx.graph);
    digest.catch(() => digests.delete(ctx));
    digests.set(ctx, digest);
  }
  return digest;
}

async function computeDigest(store: BlobStore, campaign: string, graph: PhaseGraph): Promise<string> {
  const prefix = inputPrefix(campaign);
  const hash = createHash('sha256');
  for (const key of (await store.list(prefix)).sort()) {
    const body = await store.get(key);
    if (body === undefined) continue;
    hash.update(`${key.slice(prefix.length)}\u0000${body.byteLength}\u0000`).update(body);
  }
  for (const phase of graph.phases) hash.update(`\u0001${readerOf(phase)}`);
  return hash.digest('hex').slice(0, 24);
}
