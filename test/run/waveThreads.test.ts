/**
 * The first wave's threads are weighed against the memory measured at the plan's first partition,
 * not measured again after the plan: by then the collector may have freed the plan's garbage, and
 * the same campaign (X-Value at 100,000 pairs) got one thread or two from run to run.
 */
import os from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import type * as PartitionThreadsModule from '../../lib/run/partitionThreads.js';
import type { RunMemory } from '../../lib/run/partitionThreads.js';
import type { Plan } from '../../lib/run/planCampaign.js';
import { loadContext } from '../helpers/campaigns.js';

const MiB = 2 ** 20;
const memory = vi.hoisted(() => ({ samples: [] as RunMemory[], started: [] as number[] }));

vi.mock('../../lib/run/partitionThreads.js', async (importOriginal) => {
  const real = await importOriginal<typeof PartitionThreadsModule>();
  return {
    ...real,
    runMemory: () => memory.samples.shift() ?? real.runMemory(),
    PartitionThreads: {
      start: (count: number) => {
        memory.started.push(count);
        return Promise.resolve({ size: count, close: () => Promise.resolve() });
      },
    },
  };
});

const { WaveThreads } = await import('../../lib/run/waveThreads.js');

describe('WaveThreads: how many threads the first wave gets', () => {
  it('is decided on the memory at the plan\'s first partition, even when the plan ends lighter', async () => {
    const ctx = await loadContext('examples/xvalue/demo.yaml');
    const waves = new WaveThreads({
      ctx: { ...ctx, campaign: { ...ctx.campaign, concurrency: 64 } },
      requested: undefined,
      hooks: false,
      init: { campaign: ctx.campaign, dataDir: '/nowhere', runId: 'r', retry: {} as never, chunkSize: 100, partRows: 1000, retryFailed: false },
      ledger: () => {
        throw new Error('no ledger call expected');
      },
      stop: {},
      onReplies: () => undefined,
      log: () => undefined,
    });
    const free = 16 * 1024 * MiB;
    // At the first partition: X-Value's design loaded, one thread fits (threadsForWave).
    memory.samples.push({ rssBytes: 448 * MiB, heapBytes: 297 * MiB, freeBytes: free });
    // After the plan, the collector has run: measured now, two threads would seem to fit.
    memory.samples.push({ rssBytes: 250 * MiB, heapBytes: 80 * MiB, freeBytes: free });
    const first = ctx.graph.waves[0]!;
    const items = Object.fromEntries(first.map((p) => [p.name, 40_000]));
    waves.onPlanPartition({ model: 'm', language: 'en', items }, 0, 14);
    const plan = { partitions: [{ model: 'm', language: 'en', items }] } as unknown as Plan;
    const simulated = new Map(ctx.campaign.models.map((m) => [m.id, { simulated: true }]));
    const threads = await waves.forWave(first, plan, { providers: simulated as never, batchClients: new Map() });
    expect(threads).toBeUndefined();
    expect(memory.started).toEqual([]);
    // A later wave is weighed against the memory then: two threads fit.
    memory.samples.push({ rssBytes: 300 * MiB, heapBytes: 100 * MiB, freeBytes: free });
    const later = await waves.forWave(first, plan, { providers: simulated as never, batchClients: new Map() });
    expect(later?.size ?? 1).toBe(Math.min(2, os.availableParallelism()));
  });
});
