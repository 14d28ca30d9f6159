import { describe, expect, it } from 'vitest';
import type { PhaseSpec } from '../../lib/battery/types.js';
import type { Campaign, ModelEntry } from '../../lib/design/campaign.js';
import { FUNCTION_SIZING } from '../../lib/config/sizing.js';
import { CALLS_PER_COPY, MAX_WORKER_COPIES, registeredDigest, workerReservedConcurrency, MIN_SHARD_ITEMS, SHARD_MINUTES, UNLIMITED_SHARD_ITEMS, callsPerCopy, copyLimits, pollSeconds, shardItems, slices, waveCopies } from '../../lib/run/shards.js';

/** The fields the shard rules read; the rest of a campaign does not matter to them. */
function campaign(concurrency: number, models: Partial<ModelEntry>[], judge: Partial<ModelEntry> = {}): { campaign: Campaign } {
  return { campaign: { concurrency, models: models.map((m, i) => ({ id: `m${i}`, mode: 'sync', ...m })), roles: { judge: { id: 'j', mode: 'sync', ...judge } } } as unknown as Campaign };
}

/** A phase answered by the models under test, and one answered by the judge. */
const generate = { name: 'generate', after: [], answeredBy: 'subject' } as unknown as PhaseSpec;
const judge = { name: 'judge', after: [{ phase: 'generate', take: ['reply'] }], answeredBy: { role: 'judge' } } as unknown as PhaseSpec;

describe('shards and worker copies', () => {
  it('spreads the campaign concurrency over copies of CALLS_PER_COPY calls, capped by the reserved concurrency and the slowest RPM', () => {
    const c = CALLS_PER_COPY;
    expect(waveCopies(campaign(4 * c, [{}]), [generate])).toBe(4);
    expect(waveCopies(campaign(64 * c, [{}]), [generate])).toBe(Math.min(MAX_WORKER_COPIES, 64));
    expect(waveCopies(campaign(4 * c, [{ rpm: 3000 }, { rpm: 90 }]), [generate])).toBe(3); // 90 rpm feeds 3 copies of 30
    expect(waveCopies(campaign(4 * c, [{ rpm: 10 }]), [generate])).toBe(1);
    expect(waveCopies(campaign(4 * c, [{ rpm: 10 }], { rpm: 6000 }), [judge])).toBe(4); // the judge phase reads the judge's RPM only
    // A wave of several phases holds to the slowest model answering any of them.
    expect(waveCopies(campaign(4 * c, [{}], { rpm: 60 }), [generate, judge])).toBe(2);
    expect(callsPerCopy({ concurrency: 4 * c }, waveCopies(campaign(4 * c, [{ rpm: 90 }]), [generate]))).toBe(Math.ceil((4 * c) / 3));
  });

  it("gives each copy its share of a model's limits, and sizes a shard to SHARD_MINUTES of that share", () => {
    expect(copyLimits({ rpm: 600, tpm: 100_000 }, 4)).toEqual({ rpm: 150, tpm: 25_000 });
    expect(copyLimits({}, 4)).toEqual({});
    expect(shardItems({ rpm: 600 }, 4)).toBe(150 * SHARD_MINUTES);
    expect(shardItems({ rpm: 6 }, 1)).toBe(MIN_SHARD_ITEMS);
    expect(shardItems({}, 4)).toBe(UNLIMITED_SHARD_ITEMS);
    expect(shardItems({ rpm: 1_000_000 }, 1)).toBe(UNLIMITED_SHARD_ITEMS);
  });

  it('cuts contiguous slices that cover every item once, and polls batch phases slowly', () => {
    expect(slices(45, 20)).toEqual([
      { start: 0, end: 20 },
      { start: 20, end: 40 },
      { start: 40, end: 45 },
    ]);
    expect(slices(0, 20)).toEqual([]);
    expect(pollSeconds(campaign(16, [{ mode: 'batch' }]), [generate])).toBeGreaterThan(pollSeconds(campaign(16, [{}]), [generate]));
    expect(pollSeconds(campaign(16, [{}], { mode: 'batch' }), [generate, judge])).toBeGreaterThan(pollSeconds(campaign(16, [{}]), [generate, judge]));
  });

  it("takes the ceiling on copies from the worker's reserved concurrency, and refuses a sizing without one", () => {
    expect(MAX_WORKER_COPIES).toBe(FUNCTION_SIZING.worker.reservedConcurrency);
    expect(workerReservedConcurrency({ ...FUNCTION_SIZING.worker, reservedConcurrency: 7 })).toBe(7);
    const { reservedConcurrency: _, ...unbounded } = FUNCTION_SIZING.worker;
    expect(() => workerReservedConcurrency(unbounded)).toThrow(/FUNCTION_SIZING\.worker\.reservedConcurrency must be a positive integer .*got undefined/);
    expect(() => workerReservedConcurrency({ ...FUNCTION_SIZING.worker, reservedConcurrency: 0 })).toThrow(/got 0/);
  });

  it('digests a partition\'s ids in order, so a registered marker tells one expansion from another', () => {
    expect(registeredDigest(['a', 'b'])).toBe(registeredDigest(['a', 'b']));
    expect(registeredDigest(['a', 'b'])).not.toBe(registeredDigest(['b', 'a']));
    expect(registeredDigest(['ab'])).not.toBe(registeredDigest(['a', 'b']));
    expect(registeredDigest([])).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
