import { describe, expect, it } from 'vitest';
import { partitionsPerThread } from '../../lib/run/partitionThreads.js';
import type { PlanPartition } from '../../lib/run/planCampaign.js';
import { largestPartition } from '../../lib/run/runWave.js';

describe('partitions a thread runs at once', () => {
  it('two, unless the wave has a partition of more items than two parts', () => {
    expect(partitionsPerThread(20_348, 20_000)).toBe(2); // FAR-6's generate partitions at full size
    expect(partitionsPerThread(40_000, 20_000)).toBe(2);
    expect(partitionsPerThread(40_001, 20_000)).toBe(1);
    expect(partitionsPerThread(103_680, 20_000)).toBe(1); // P(True)'s verify partitions at the paper's size
    expect(partitionsPerThread(103_680, 60_000)).toBe(2);
  });

  it("weighs the wave by its largest partition of any of its phases, not another wave's", () => {
    const plan: { partitions: PlanPartition[] } = {
      partitions: [
        { model: 'a', language: 'en', items: { generate: 17_280, verify: 103_680, judge: 10_368 } },
        { model: 'b', language: 'en', items: { generate: 17_280, verify: 90_000 } },
      ],
    };
    expect(largestPartition(plan, [{ name: 'verify' }, { name: 'judge' }])).toBe(103_680);
    expect(largestPartition(plan, [{ name: 'generate' }])).toBe(17_280);
    expect(largestPartition(plan, [{ name: 'absent' }])).toBe(0);
  });
});
