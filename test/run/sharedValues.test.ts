/**
 * What the id and prompt-row caches keep (lib/core/hash.ts) ends with each partition: they keep a
 * value as long as its object lives, and design data lives as long as the run. X-Value's items carry
 * their QA pair's annotation; a run that kept the JSON and digest of every annotation it met grew by
 * the whole design's worth (a partition thread's heap peaked at 1.1 GB at 100,000 pairs, 0.84 GB
 * without it).
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, cachedCanonicalJson, cachedDigest } from '../../lib/core/hash.js';
import { PartitionItems } from '../../lib/run/partitionItems.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, tempDir } from '../helpers/campaigns.js';

const DEMO = 'examples/xvalue/demo.yaml';

describe('a partition run keeps nothing of the design in the shared caches', () => {
  it('after a run, an annotation its items carried is serialized and digested anew', async () => {
    const { dir, cleanup } = await tempDir('shared-values');
    try {
      const ctx = await loadContext(DEMO, dir);
      const model = ctx.campaign.models[0]!;
      const language = ctx.design.languages[0]!;
      const item = new PartitionItems({ ctx, model, language }).items('step1')[0]!;
      // The same object every item of its pair carries (the design's own), not a copy.
      const gold = (item.extras as { gold: { overall: string } }).gold;
      const before = canonicalJson(gold);
      await runCampaign(ctx, { dataDir: dir, threads: 1 });
      // Changed after the run: a cache that still held it would give what the run computed.
      gold.overall = `${gold.overall}, changed`;
      expect(cachedCanonicalJson(gold)).toBe(canonicalJson(gold));
      expect(cachedCanonicalJson(gold)).not.toBe(before);
      expect(cachedDigest(gold)).toBe(cachedDigest(JSON.parse(canonicalJson(gold)) as object));
    } finally {
      await cleanup();
    }
  }, 60_000);
});
